"""What is due: notes whose next_review is on or before today, overdue first, then new notes.

New notes (no block, or no next_review) are listed after the due ones, flagged `new`.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date

from studyapp.vault.model import Note


@dataclass(frozen=True)
class DueNote:
    note: Note
    days_overdue: int | None
    """0 when due today; None for a new note."""

    @property
    def is_new(self) -> bool:
        return self.days_overdue is None

    def as_json(self) -> dict:
        note = self.note
        pairing = note.pairing()
        return {
            "id": note.id,
            "path": note.path,
            "title": note.title,
            "next_review": note.next_review.isoformat() if note.next_review else None,
            "last_reviewed": note.last_reviewed.isoformat() if note.last_reviewed else None,
            "review_count": note.review_count,
            "difficulty": note.difficulty,
            "mastery_level": note.mastery_level,
            "tags": note.tags,
            "drills": pairing.drills,
            "drills_source": pairing.source,
            "new": self.is_new,
            "days_overdue": self.days_overdue,
        }


def due_notes(notes: list[Note], today: date) -> list[DueNote]:
    """Due notes, most overdue first (ties by path), followed by new notes by path."""
    due = [DueNote(n, (today - n.next_review).days) for n in notes
           if n.next_review is not None and n.next_review <= today]
    due.sort(key=lambda d: (-(d.days_overdue or 0), d.note.path))  # never None in `due`
    new = [DueNote(n, None) for n in notes if n.next_review is None]
    return due + new
