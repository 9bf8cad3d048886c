"""Messages posted by workers, named for what happened; handlers on the screens own the state."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from textual.message import Message

from studyapp.views import Card, DrillView, NoteView, Problem, ReviewProgress, StatsData, TodayCounts, TodaySummary


@dataclass
class VaultLoaded(Message):
    """The facade finished loading the vault and the review history."""

    notes: int
    problems: int


@dataclass
class HistoryRepaired(Message):
    """Opening the history finished or dropped writes a crash interrupted (one line each)."""

    lines: tuple[str, ...]


@dataclass
class VaultLoadFailed(Message):
    """Loading failed; the message says why in words a user can act on."""

    reason: str


@dataclass
class CachedCountsRead(Message):
    """Today's figures as the metadata cache last saw the vault, while the real load still runs."""

    counts: TodayCounts


@dataclass
class TodayCounted(Message):
    """The Today figures are known; the heatmap, drills and mastery follow in `TodayComputed`."""

    counts: TodayCounts


@dataclass
class TodayComputed(Message):
    summary: TodaySummary


@dataclass
class ReviewCardReady(Message):
    """The next card of the session is known (None: the session is over)."""

    card: Card | None
    progress: ReviewProgress


@dataclass
class NotesListed(Message):
    rows: list[NoteView]
    problems: list[Problem]


@dataclass
class NotesSearched(Message):
    """The notes whose text contains `text` (the filter as it was when the search began)."""

    text: str
    paths: frozenset[str]


@dataclass
class DrillsListed(Message):
    drills: list[DrillView]
    progress: list[Any] = field(default_factory=list)
    """Each drill as a review item (`drill_reviews.DrillProgress`): next due, passes/attempts."""


@dataclass
class StatsComputed(Message):
    stats: StatsData


@dataclass
class DrillRetentionComputed(Message):
    """The drills' weekly retention, drawn next to the notes' on Stats."""

    weeks: tuple[tuple[Any, float], ...]


@dataclass
class GradeFinished(Message):
    """The grader returned a verdict for the drill file."""

    verdict: dict[str, Any]


@dataclass
class VaultFilesChanged(Message):
    """The vault watcher saw notes change on disk (posix paths relative to the vault)."""

    paths: tuple[str, ...]


@dataclass
class ReviewLogChanged(Message):
    """The watcher saw a device's review log file change (maybe another device's reviews)."""


@dataclass
class VaultSynced(Message):
    """The facade took outside changes in: these notes were added, removed or changed."""

    changed: tuple[str, ...]


@dataclass
class RatingsUndoneElsewhere(Message):
    """Another studyapp (`studyapp undo`, another app or device) took back ratings this review
    session gave: these notes' titles; each is due in the session again."""

    titles: tuple[str, ...]
