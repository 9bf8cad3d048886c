"""Grading learners' drills: a warm worker process runs each submission in an isolated child.

The app talks to it through `client.GraderClient` only; nothing here imports torch except the
worker side (`worker`, `child`, `sandbox`, `results`). The child's walls live in `confine`, the
one frame it may send back in `channel`, and what the parent accepts from it in `results`.
"""
