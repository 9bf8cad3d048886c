"""The rows the review database hands out: typed dataclasses, never `sqlite3.Row`s.

Apart from `store.py` so that what a caller gets (and how an instant is stored) can be read,
and imported, without the SQL that fills it. Instants are timezone-aware datetimes here and
ISO-8601 text in UTC in the database (`utc_text`), which sorts correctly as text.
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any, overload


def utc_text(moment: datetime) -> str:
    """The stored form of an instant: ISO-8601 in UTC, so text order is time order."""
    if moment.tzinfo is None:
        raise ValueError("instants must be timezone-aware")
    return moment.astimezone(timezone.utc).isoformat()


@overload
def parse_utc(text: str) -> datetime: ...
@overload
def parse_utc(text: None) -> None: ...
def parse_utc(text: str | None) -> datetime | None:
    return None if text is None else datetime.fromisoformat(text)


@dataclass
class NoteRow:
    """A note as the database knows it; `key` stays the same across renames."""

    key: int
    path: str
    content_hash: str | None
    title: str | None
    deleted: bool


@dataclass
class CardRow:
    """FSRS state of one note (fields mirror `fsrs.Card`), plus what FSRS does not keep."""

    note_key: int
    state: int
    step: int | None
    stability: float | None
    difficulty: float | None
    due: datetime
    last_review: datetime | None
    suspended: bool = False
    reps: int = 0
    lapses: int = 0
    legacy: bool = False
    """Seeded from the previous tool's metadata rather than from our own reviews."""

    def to_json(self) -> str:
        data = dict(self.__dict__)
        data["due"] = utc_text(self.due)
        data["last_review"] = utc_text(self.last_review) if self.last_review else None
        return json.dumps(data)

    @classmethod
    def from_json(cls, text: str) -> CardRow:
        data = json.loads(text)
        data["due"] = parse_utc(data["due"])
        data["last_review"] = parse_utc(data["last_review"])
        return cls(**data)


@dataclass
class JournalEntry:
    """A file write whose database half has not committed yet (see `review_journal.repair_pending`)."""

    id: int
    kind: str
    path: str
    hash_before: str | None
    hash_after: str | None
    payload: dict[str, Any]

    @property
    def owner(self) -> str | None:
        """The writing process (`locking.ProcessIdentity` as text); None in rows of old versions."""
        owner = self.payload.get("owner")
        return owner if isinstance(owner, str) else None


@dataclass
class ReviewRow:
    """One logged review: the card before and after, and what the note held before."""

    id: int
    note_key: int
    rating: int
    reviewed_at: datetime
    duration_ms: int | None
    state_before: int | None
    """None for a new card's first review (what the daily new limit counts)."""
    state_after: int
    stability_before: float | None
    stability_after: float | None
    difficulty_before: float | None
    difficulty_after: float | None
    due_before: datetime | None
    due_after: datetime
    scheduled_days: float
    elapsed_days: float | None
    card_before: str | None
    """The stored card before the review (`CardRow.to_json`); None when there was none."""
    file_values_before: str | None
    """The note's owned keys before the review, as JSON; None beyond what undo reaches."""
    path: str
    hash_before: str | None
    hash_after: str | None
    event_id: str | None = None
    """The review log event it was recorded or replayed from."""
    title: str | None = None
    """The note's title (only `Store.unlogged_reviews` fills it in)."""
    utc_offset: int | None = None
    """The reviewer's UTC offset then, in seconds (None: recorded before schema 8)."""

    @classmethod
    def from_sql(cls, row: sqlite3.Row) -> ReviewRow:
        keys = row.keys()
        return cls(
            id=row["id"], note_key=row["note_key"], rating=row["rating"],
            reviewed_at=parse_utc(row["reviewed_at"]), duration_ms=row["duration_ms"],
            state_before=row["state_before"], state_after=row["state_after"],
            stability_before=row["stability_before"], stability_after=row["stability_after"],
            difficulty_before=row["difficulty_before"], difficulty_after=row["difficulty_after"],
            due_before=parse_utc(row["due_before"]), due_after=parse_utc(row["due_after"]),
            scheduled_days=row["scheduled_days"], elapsed_days=row["elapsed_days"],
            card_before=row["card_before"], file_values_before=row["file_values_before"],
            path=row["path"], hash_before=row["hash_before"], hash_after=row["hash_after"],
            event_id=row["event_id"], title=row["title"] if "title" in keys else None,
            utc_offset=row["utc_offset"] if "utc_offset" in keys else None)


REVIEW_COLUMNS: tuple[str, ...] = (
    "note_key", "rating", "reviewed_at", "duration_ms", "state_before", "state_after",
    "stability_before", "stability_after", "difficulty_before", "difficulty_after", "due_before",
    "due_after", "scheduled_days", "elapsed_days", "card_before", "file_values_before", "path",
    "hash_before", "hash_after", "event_id", "utc_offset")
"""The columns of a replayed review row (`Store.replace_replayed`), in this order: a rebuild
makes 100,000 of them, and a list is ten times quicker to build than a dict of names."""
R_NOTE_KEY, R_CARD_BEFORE, R_FILE_VALUES_BEFORE, R_HASH_BEFORE, R_HASH_AFTER, R_EVENT_ID = (
    REVIEW_COLUMNS.index(name) for name in ("note_key", "card_before", "file_values_before",
                                            "hash_before", "hash_after", "event_id"))


@dataclass
class DrillAttempt:
    """One graded submission of a drill."""

    id: int
    drill_id: str
    verdict: str
    """"pass", "fail" (wrong answer) or "error" (did not run)."""
    summary: str
    attempted_at: datetime
    duration_ms: int | None = None
    file_path: str | None = None
    note_key: int | None = None
    topic: str | None = None
    event_id: str | None = None
    source_sha256: str | None = None
    """SHA-256 of the source bytes graded (`Verdict.source_sha256`); None before schema 7."""
    device: str | None = None
    """"cpu" or "cuda", where the run was graded; None before schema 7."""

    @classmethod
    def from_sql(cls, row: sqlite3.Row) -> DrillAttempt:
        return cls(id=row["id"], drill_id=row["drill_id"], verdict=row["verdict"],
                   summary=row["summary"] or "", attempted_at=parse_utc(row["attempted_at"]),
                   duration_ms=row["duration_ms"], file_path=row["file_path"],
                   note_key=row["note_key"], topic=row["topic"], event_id=row["event_id"],
                   source_sha256=row["source_sha256"], device=row["device"])


@dataclass
class DrillReviewRow:
    """One review of a drill (`studyapp.drill_reviews`): its rating and the try behind it."""

    id: int
    drill_id: str
    rating: int
    reviewed_at: datetime
    state_after: int
    due_after: datetime
    proposed: int | None = None
    """The rating the try earned (None: rated without a finished try)."""
    duration_ms: int | None = None
    hints: int = 0
    runs: int = 0
    failed_runs: int = 0
    gave_up: bool = False
    state_before: int | None = None
    """None for the drill's first review."""
    stability_before: float | None = None
    stability_after: float | None = None
    due_before: datetime | None = None
    try_start: str | None = None
    """The event id of the try's start mark."""
    event_id: str | None = None
    card_before: str | None = None
    """The drill's card before the review (`CardRow.to_json`), what undo puts back; None for
    a first review, and for reviews recorded before studyapp kept it."""

    @classmethod
    def from_sql(cls, row: sqlite3.Row) -> DrillReviewRow:
        return cls(
            id=row["id"], drill_id=row["drill_id"], rating=row["rating"],
            reviewed_at=parse_utc(row["reviewed_at"]), state_after=row["state_after"],
            due_after=parse_utc(row["due_after"]), proposed=row["proposed"],
            duration_ms=row["duration_ms"], hints=row["hints"], runs=row["runs"],
            failed_runs=row["failed_runs"], gave_up=bool(row["gave_up"]),
            state_before=row["state_before"], stability_before=row["stability_before"],
            stability_after=row["stability_after"], due_before=parse_utc(row["due_before"]),
            try_start=row["try_start"], event_id=row["event_id"], card_before=row["card_before"])


@dataclass
class FittedParams:
    """One fit of the FSRS parameters (`studyapp optimize`)."""

    id: int
    fitted_at: datetime
    parameters: list[float]
    log_loss_before: float | None
    log_loss_after: float | None
    review_count: int | None
    stored_as: str = field(default="", repr=False)
    """The row's fit time and parameters as stored, which the log's event id for this fit is
    drawn from (adopting the same fit twice must give the same id)."""

    @classmethod
    def from_sql(cls, row: sqlite3.Row) -> FittedParams:
        return cls(id=row["id"], fitted_at=parse_utc(row["fitted_at"]),
                   parameters=json.loads(row["parameters"]), log_loss_before=row["log_loss_before"],
                   log_loss_after=row["log_loss_after"], review_count=row["review_count"],
                   stored_as=f"{row['fitted_at']}:{row['parameters']}")


def note_from_sql(row: sqlite3.Row) -> NoteRow:
    return NoteRow(row["key"], row["path"], row["content_hash"], row["title"], bool(row["deleted"]))


def card_from_sql(row: sqlite3.Row) -> CardRow:
    return CardRow(
        note_key=row["note_key"], state=row["state"], step=row["step"],
        stability=row["stability"], difficulty=row["difficulty"], due=datetime.fromisoformat(row["due"]),
        last_review=parse_utc(row["last_review"]), suspended=bool(row["suspended"]),
        reps=row["reps"], lapses=row["lapses"], legacy=bool(row["legacy"]),
    )
