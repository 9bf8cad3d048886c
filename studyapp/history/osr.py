"""Review state written by Obsidian Spaced Repetition, as FSRS memory state.

OSR keeps a note's schedule in its front matter (`sr-due`, `sr-interval`, `sr-ease`) or in an
inline comment `<!--SR:!2026-01-05,12,250-->`, with the ease written as 250 or as 2.5. Each
becomes an IMPORT event (the card a note starts from), converted with the FSRS project's own
SM-2 conversion (`fsrs-rs-python`'s `memory_state_from_sm2`). The user's files are not
touched. The event's id is drawn from the note and its values, so importing again adds nothing.
"""

from __future__ import annotations

import re
import uuid
from dataclasses import dataclass
from datetime import date, datetime, timedelta

from studyapp.store import CardRow

INLINE = re.compile(r"<!--SR:!(\d{4}-\d{2}-\d{2}),(\d+),(\d+(?:\.\d+)?)")


@dataclass(frozen=True)
class OsrSchedule:
    """One note's schedule as OSR wrote it."""

    due: date
    interval_days: int
    ease: float
    """As a factor (2.5), whichever way it was written."""


def schedule_of(note) -> OsrSchedule | None:
    """The note's OSR schedule: front matter first, else the first inline comment."""
    meta = note.meta
    if meta.get("sr-due") is not None:
        try:
            due = meta["sr-due"]
            due = due if isinstance(due, date) else date.fromisoformat(str(due).strip())
            return OsrSchedule(due, int(float(meta["sr-interval"])),
                               _factor(float(meta["sr-ease"])))
        except (KeyError, TypeError, ValueError):
            return None
    if "<!--SR:" not in (note.body or ""):
        return None
    found = INLINE.search(note.body)
    if found is None:
        return None
    try:
        return OsrSchedule(date.fromisoformat(found[1]), int(found[2]), _factor(float(found[3])))
    except ValueError:
        return None


def _factor(ease: float) -> float:
    """250 and 2.5 both mean an ease factor of 2.5."""
    return ease / 100 if ease > 10 else ease


def card_from(schedule: OsrSchedule, desired_retention: float) -> CardRow:
    """A review-state FSRS card with the memory state SM-2's interval and ease imply."""
    from studyapp.optimize import fsrs_rs
    from studyapp.schedule import start_of_day

    fsrs_rs_python = fsrs_rs("`import-history osr` (SM-2 to FSRS)")

    interval = max(schedule.interval_days, 1)
    model = fsrs_rs_python.FSRS(fsrs_rs_python.DEFAULT_PARAMETERS)
    state = model.memory_state_from_sm2(schedule.ease, float(interval), desired_retention)
    due = start_of_day(schedule.due)
    return CardRow(note_key=0, state=2, step=None, stability=float(state.stability),
                   difficulty=float(state.difficulty), due=due,
                   last_review=due - timedelta(days=interval), reps=1, legacy=True)


def import_event_id(path: str, schedule: OsrSchedule) -> str:
    """The same note with the same values always gives the same event id (idempotent)."""
    key = f"osr:{path}:{schedule.due}:{schedule.interval_days}:{schedule.ease}"
    return uuid.uuid5(uuid.NAMESPACE_URL, key).hex


def import_time(card: CardRow) -> datetime:
    """When the imported state held: at its last review, before any later review of ours."""
    assert card.last_review is not None, "card_from always sets last_review"
    return card.last_review
