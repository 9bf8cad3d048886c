"""Plain view objects the TUI draws, produced by `studyapp.facade.StudyFacade`: the contract
between the screens and the core, named `...View` where the core has a row of its own.

Torch-free and Textual-free: screens depend on these and on the facade's methods only, so
tests can swap in a fake facade.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date
from pathlib import Path

from studyapp.undo_kinds import UndoKind

RATING_LABELS = {1: "Again", 2: "Hard", 3: "Good", 4: "Easy"}
"""FSRS ratings as Anki names them; the keys are the keys the learner presses."""


@dataclass(frozen=True)
class Card:
    """One note as the review screen shows it."""

    path: str
    """Posix path relative to the vault: the note's identity for every call below."""
    title: str
    answer: str
    """Markdown under the note's first `##` heading (the whole body when it has none): what
    the learner should have recalled. Line breaks are kept (`studyapp.note_text`)."""
    body: str
    """The whole note without its metadata block and title lines (the `f` key shows it)."""
    drills: tuple[str, ...] = ()
    """The drills that train the note (`mastery.trained_drills`): `p` opens the first."""
    unknown_drills: tuple[str, ...] = ()
    """Ids its `drills:` key names that are no drill here (reported, never opened)."""
    is_new: bool = False
    revision: str = ""
    """The note's content hash when the card was built: a rating names the version it judged."""


class NoteChangedOutside(Exception):
    """A rating was refused: the note changed on disk (an editor, the CLI, a sync) since it was
    shown, so the learner judged a version that no longer exists. The session already holds the
    note as it is now."""

    def __init__(self, path: str, title: str, readable: bool = True) -> None:
        super().__init__(f"“{title}” changed outside the app; showing it as it is now." if readable else
                         f"“{title}” changed outside the app and can no longer be read; it leaves this session.")
        self.path = path
        self.title = title


class NoteSuspendedElsewhere(NoteChangedOutside):
    """A rating was refused: the note was suspended by another process (`studyapp suspend`)
    while it was shown; it leaves the session."""

    def __init__(self, path: str, title: str) -> None:
        super().__init__(path, title)
        self.args = (f"“{title}” was suspended elsewhere; it leaves this session unrated.",)


@dataclass(frozen=True)
class RatingOption:
    """A rating button: what pressing it would schedule, shown before the learner chooses."""

    rating: int
    label: str
    interval: str
    """Human interval such as `10m`, `3d`, `2.1mo`."""


@dataclass(frozen=True)
class ReviewProgress:
    """The progress line of a review session: Anki's counts of what is left, and what is done."""

    new: int
    learning: int
    review: int
    reviewed: int
    waiting: int = 0
    """Learning steps not due yet that come back later in this session."""

    @property
    def remaining(self) -> int:
        return self.new + self.learning + self.review


@dataclass(frozen=True)
class ReviewOutcome:
    """What a rating did, for the notification and the session summary."""

    path: str
    rating: int
    interval: str
    next_review: date | None


@dataclass(frozen=True)
class Undone:
    """What `undo` did, for the notification, and the note to show again (None when the note
    is not part of the running session)."""

    kind: UndoKind
    path: str
    title: str
    card: Card | None = None


@dataclass(frozen=True)
class SessionSummary:
    """Shown when a review session runs out of notes."""

    reviewed: int
    by_rating: dict[int, int]
    seconds: float


@dataclass(frozen=True)
class DrillView:
    """A row of the drill list."""

    id: str
    title: str
    tags: tuple[str, ...]
    status: str
    """"not started", "failing" or "passed"."""
    last_result: str | None = None
    """Summary of the latest graded attempt, if any."""


@dataclass(frozen=True)
class DrillDetail:
    """An opened drill: the statement and the learner's own file to edit."""

    id: str
    title: str
    statement: str
    """Markdown: task and contract."""
    workspace_file: Path
    hints: tuple[str, ...] = ()
    last_verdict: dict | None = None
    """The latest verdict: in full when graded during this run, else the stored summary line."""


@dataclass(frozen=True)
class NoteView:
    """A row of the Notes browser."""

    path: str
    title: str
    folder: str
    tags: tuple[str, ...]
    next_review: date | None
    mastery: float | None
    review_count: int
    suspended: bool = False


@dataclass(frozen=True)
class Problem:
    """A note that could not be read, and why (one line a user understands)."""

    path: str
    reason: str


@dataclass(frozen=True)
class TodayCounts:
    """The Today screen's figures, computed before the rest so they show first."""

    new: int
    """New notes today's session would introduce (the daily limit applied)."""
    learning: int
    """Learning and relearning steps due now."""
    review: int
    """Reviews due now (the daily limit applied)."""
    reviewed_today: int
    streak: int
    problems: int = 0

    @property
    def due_now(self) -> int:
        return self.learning + self.review


@dataclass(frozen=True)
class TodaySummary:
    """Everything the Today screen draws."""

    new: int
    learning: int
    review: int
    reviewed_today: int
    streak: int
    heatmap: dict[date, int]
    """Reviews per day over the last months."""
    drills: tuple[DrillView, ...]
    """Drills paired with what is due today (or, failing that, those not yet passed)."""
    mastery_by_tag: tuple[tuple[str, float], ...]
    problems: int = 0
    drills_due: int = 0
    """Drills the review offers once no note is left (worked out only then): Today says so
    rather than "Nothing due"."""

    @property
    def due_now(self) -> int:
        return self.learning + self.review


@dataclass(frozen=True)
class StatsData:
    """Everything the Stats screen plots."""

    heatmap: dict[date, int]
    forecast: tuple[tuple[date, int], ...]
    """Notes falling due on each of the next 30 days."""
    retention: tuple[tuple[str, float | None], ...]
    """True retention over named windows (7/30/365 days); None when there were no reviews."""
    retention_by_week: tuple[tuple[date, float], ...]
    mastery_by_tag: tuple[tuple[str, float], ...]
    drill_history: tuple[tuple[date, int, int], ...]
    """Per day: drill attempts passed, attempts not passed."""
    counts_by_state: dict[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class OtherDevicesReviews:
    """What replaying other devices' new log entries changed, for a notification."""

    reviews: int
    """Reviews the cache holds now that it did not before (negative when undos came in)."""
    notes: tuple[str, ...]
    """Notes whose owned keys were rewritten to the replayed state."""
    problems: tuple[str, ...]
