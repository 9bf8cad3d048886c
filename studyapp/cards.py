"""Which note is whose card, and in what order cards come up: cards for every note (stored,
or derived from the previous tool's history), and the order and counts of a queue (which
stored note is which file is `identity`). Pure functions over the store and the scheduler; `review_session` builds
today's queue and a running session from them, `reviews` records what happens."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import date, datetime, timedelta, timezone
from enum import Enum
from typing import TYPE_CHECKING

from fsrs import Scheduler, State

from studyapp.schedule import (
    day_start,
    has_legacy_history,
    legacy_card,
    new_card,
    retrievability,
    start_of_day,
)
from studyapp.store import CardRow, Store

if TYPE_CHECKING:
    from studyapp.vault import Note

LEARN_AHEAD = timedelta(minutes=20)
"""A learning step due this soon stays in the session (Anki's learn-ahead limit)."""


@dataclass
class NoteCard:
    """A vault note with its scheduler state."""

    note: Note
    key: int | None
    """Store key, None until the note is first reviewed or suspended."""
    card: CardRow
    """Stored card, else derived: from legacy metadata, or a new card."""
    is_new: bool
    """Never reviewed, by us or by the previous tool."""


def never_reviewed(card: CardRow) -> bool:
    """No review ever scheduled this card (only a suspension stored it)."""
    return card.last_review is None and card.stability is None


def derive_card(note, key: int | None, scheduler: Scheduler, now: datetime,
                today: date | None = None) -> tuple[CardRow, bool]:
    """(card, is_new) for a note with no stored card: legacy history migrates, else new."""
    if has_legacy_history(note.review_count, note.last_reviewed):
        card = legacy_card(
            key or 0, review_count=note.review_count, last_reviewed=note.last_reviewed,
            next_review=note.next_review, difficulty_label=note.difficulty,
            scheduler=scheduler, today=today or now.astimezone().date(),
        )
        return card, False
    card = new_card(key or 0, now)
    if note.next_review is not None:  # the previous tool's date: not introduced before it
        card.due = start_of_day(note.next_review)
    return card, True


def note_cards(store: Store, scheduler: Scheduler, notes: Iterable, now: datetime,
               due_by: datetime | None = None) -> list[NoteCard]:
    """Every note with its card. Reads the database once; writes nothing.

    With `due_by`, notes that cannot be due by then are left out unseen: a note with no stored
    card whose `next_review` day starts after `due_by` (its derived card, legacy or new, is due
    at the start of that day). `due` skips deriving cards for the future half of a vault so.
    """
    keys = {row.path: row.key for row in store.live_notes()}
    cards = store.cards()
    now, today = now.astimezone(timezone.utc), now.astimezone().date()
    # A day after due_by's local day starts after due_by: told by comparing dates, without
    # working out the day's first instant for each of a vault's future notes.
    last_day = due_by.astimezone().date() if due_by is not None else date.max
    result = []
    for note in notes:
        key = keys.get(note.path)
        stored = cards.get(key) if key is not None else None
        if stored is not None and not never_reviewed(stored):
            result.append(NoteCard(note, key, stored, is_new=False))
        elif stored is not None:
            # A row no review wrote (an older version stored one on suspend): the file decides.
            card, is_new = derive_card(note, key, scheduler, now, today)
            card.suspended = stored.suspended
            result.append(NoteCard(note, key, card, is_new))
        elif due_by is not None and note.next_review is not None and (
                note.next_review > last_day or start_of_day(note.next_review) > due_by):
            continue
        else:
            card, is_new = derive_card(note, key, scheduler, now, today)
            result.append(NoteCard(note, key, card, is_new))
    return result


def session_queue(items: Sequence[NoteCard], scheduler: Scheduler, now: datetime,
                  new_left: int, reviews_left: int) -> list[NoteCard]:
    """What to review now, in order.

    1. learning/relearning steps already due (they are time-sensitive);
    2. review cards due by now: overdue (due before today) first, then lowest retrievability,
       at most `reviews_left`;
    3. new notes whose date has come (the previous tool's next_review, if any), at most
       `new_left`, oldest date first, then by path (notes without a date last);
    4. learning steps due within LEARN_AHEAD, so an "again" comes back in the same session.
    Suspended notes are never due.
    """
    today_start = day_start(now)
    steps_now, steps_soon, reviews, new = [], [], [], []
    for item in items:
        card = item.card
        if card.suspended:
            continue
        if item.is_new:
            if card.due <= now:
                new.append(item)
        elif card.state in (State.Learning, State.Relearning):
            if card.due <= now:
                steps_now.append(item)
            elif card.due <= now + LEARN_AHEAD:
                steps_soon.append(item)
        elif card.due <= now:
            overdue = card.due < today_start
            reviews.append((not overdue, retrievability(scheduler, card, now), item.note.path, item))
    steps_now.sort(key=lambda i: i.card.due)
    steps_soon.sort(key=lambda i: i.card.due)
    reviews.sort(key=lambda t: t[:3])
    new.sort(key=lambda i: (i.note.next_review or date.max, i.note.path))
    return (steps_now + [t[3] for t in reviews[:max(reviews_left, 0)]]
            + new[:max(new_left, 0)] + steps_soon)


class QueueKind(Enum):
    """Anki's three counts: which one a queued note adds to."""

    NEW = "new"
    LEARNING = "learning"
    REVIEW = "review"


def queue_kind(item: NoteCard) -> QueueKind:
    if item.is_new:
        return QueueKind.NEW
    if item.card.state in (State.Learning, State.Relearning):
        return QueueKind.LEARNING
    return QueueKind.REVIEW


@dataclass(frozen=True)
class QueueCounts:
    """What is left of a session, as Anki counts it (the one definition the CLI and TUI show).

    A learning step that is not due yet but comes back within the session (LEARN_AHEAD) is
    `waiting`, not remaining: after Good on a new note the new count drops by one and the
    note waits for its next step, shown again when nothing else is left.
    """

    new: int = 0
    learning: int = 0
    review: int = 0
    waiting: int = 0

    @property
    def remaining(self) -> int:
        return self.new + self.learning + self.review


def queue_counts(queue: Iterable[NoteCard], now: datetime) -> QueueCounts:
    """Counts of a session queue (`session_queue`'s order and limits already applied)."""
    counts = {kind: 0 for kind in QueueKind}
    waiting = 0
    for item in queue:
        kind = queue_kind(item)
        if kind is QueueKind.LEARNING and item.card.due > now:
            waiting += 1
        else:
            counts[kind] += 1
    return QueueCounts(counts[QueueKind.NEW], counts[QueueKind.LEARNING], counts[QueueKind.REVIEW],
                       waiting)
