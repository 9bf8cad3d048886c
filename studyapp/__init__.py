"""studyapp: review markdown interview notes with FSRS and practise graded PyTorch drills."""

__version__ = "0.1.0"
