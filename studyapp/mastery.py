"""Mastery: one number per note, one definition, used by the notes' `mastery_level`, the
statistics and the TUI, together with the one answer to "which drills train this note".

A note's drills are its `drills:` key when it has one (known ids only; the unknown ones are
reported, never opened), else the drills suggested from its text (`studyapp.pairing`). The
review screen offers the same drills the formula counts, so passing a drill the app paired
with a note always shows in that note's mastery.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import TYPE_CHECKING

from fsrs import Scheduler

from studyapp.schedule import retrievability
from studyapp.store import CardRow

if TYPE_CHECKING:
    from studyapp.vault import Note

MASTERY_TARGET_DAYS = 21.0
"""Stability (days) at which a note's memory counts as fully built (see `mastery`)."""
MASTERY_DRILL_WEIGHT = 0.25
"""Share of mastery that comes from passing a note's drills, when it has any."""


def trained_drills(note: Note) -> tuple[str, ...]:
    """The drills that train `note`: declared (known ids only), else suggested from its text.
    Read from the metadata cache when it knows the note's pairing, else from the note's body."""
    return tuple(note.pairing().drills)


def unknown_drills(note: Note) -> tuple[str, ...]:
    """Ids the note's `drills:` key names that are no drill here (a typo, a drill not written yet)."""
    return tuple(note.pairing().unknown)


def mastery(row: CardRow | None, now: datetime, scheduler: Scheduler,
            drills: Sequence[str] = (), drill_status: Mapping[str, str] | None = None) -> float:
    """The one mastery formula, in [0, 1] (documented in the README, "Mastery").

        memory  = min(1, S / 21 days) * R(now)        S: FSRS stability, R: retrievability
        drills  = share of the note's drills passed   (only when the note has drills)
        mastery = memory                              without drills
                = 0.75 * memory + 0.25 * drills       with drills

    `drills` are `trained_drills(note)`. It rises with demonstrated recall (each successful
    review grows S), decays as recall fades (R), and falls with a lapse (an "again" cuts S to
    the post-lapse stability).
    """
    if row is None or row.last_review is None:
        return 0.0  # never reviewed: nothing demonstrated yet, whatever the drills say
    memory = 0.0
    if row.stability:
        memory = min(1.0, row.stability / MASTERY_TARGET_DAYS) * retrievability(scheduler, row, now)
    if not drills:
        value = memory
    else:
        status = drill_status or {}
        passed = sum(1 for d in drills if status.get(d) == "passed") / len(drills)
        value = (1 - MASTERY_DRILL_WEIGHT) * memory + MASTERY_DRILL_WEIGHT * passed
    return round(min(1.0, max(0.0, value)), 3) if math.isfinite(value) else 0.0


def asks_for_drills(card: CardRow | None) -> bool:
    """Whether `note_mastery` needs the note's drills: only once its card was reviewed."""
    return card is not None and card.last_review is not None


def note_mastery(note: Note, card: CardRow | None, now: datetime, scheduler: Scheduler,
                 drill_status: Mapping[str, str]) -> float:
    """`mastery` of one note with its card: what is written to the note and what stats show.
    A never-reviewed note is 0 without reading its body for suggestions."""
    if not asks_for_drills(card):
        return 0.0
    return mastery(card, now, scheduler, trained_drills(note), drill_status)
