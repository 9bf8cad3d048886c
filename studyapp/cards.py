"""Which note is whose card, and in what order cards come up: note identity across renames,
cards for every note (stored, or derived from the previous tool's history), and the order and
counts of a queue. Pure functions over the store and the scheduler; `review_session` builds
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
        elif due_by is not None and note.next_review is not None and start_of_day(note.next_review) > due_by:
            continue
        else:
            card, is_new = derive_card(note, key, scheduler, now, today)
            result.append(NoteCard(note, key, card, is_new))
    return result


def has_vanished(store: Store, notes: Sequence, problem_paths: Iterable[str]) -> bool:
    """Whether a stored live note's path is missing from the vault, or holds another note while
    a new path appeared (a rename or a deletion for `reconcile_identity` to settle): one query,
    so a load with nothing to settle takes no lock."""
    present = {n.path for n in notes} | set(problem_paths)
    rows = store.live_notes()
    if any(row.path not in present for row in rows):
        return True
    return bool(_written_anew(store, rows, notes) or _put_back(store, rows, notes))


def _put_back(store: Store, rows: Sequence, notes: Sequence) -> list:
    """Notes marked deleted whose file is back at their path (restored from the trash or a
    backup), with no live note there: the same bytes, or the same title with review keys."""
    live = {row.path for row in rows}
    gone = {row.path: row for row in store.deleted_notes() if row.path not in live}
    if not gone:
        return []
    found = []
    for note in notes:
        row = gone.get(note.path)
        if row is not None and ((row.content_hash and note.content_hash == row.content_hash) or (
                row.title and note.title == row.title
                and has_legacy_history(note.review_count, note.last_reviewed))):
            found.append(row)
    return found


def _written_anew(store: Store, rows: Sequence, notes: Sequence) -> list:
    """The stored rows of reviewed notes whose path now holds another note: a file whose own
    review keys say it was never reviewed, under another title (`mv b.md b-archive.md`, then a
    new `b.md`). The history left with the file that moved, if one appeared; a stale copy of
    the same note put back keeps its title, and a renamed heading its review keys."""
    by_path = {n.path: n for n in notes}
    found = []
    for row in rows:
        note = by_path.get(row.path)
        if (note is not None and row.title and note.title != row.title
                and not has_legacy_history(note.review_count, note.last_reviewed)
                and store.has_reviews(row.key)):
            found.append(row)
    return found


def reconcile_identity(store: Store, notes: Sequence, problem_paths: Iterable[str],
                       now: datetime) -> dict[str, str]:
    """Keep each stored note's key when its file moved; mark vanished notes deleted.

    A stored path that disappeared is matched to a path that appeared (not yet known to the
    store) by content hash, else by title when exactly one candidate has it and it could be
    the same note: a reviewed note's title is not matched to a file whose own review keys say
    it was never reviewed (a note written anew under an old title, after the first was deleted
    on this or another device, would take over its history and have its keys rewritten). Unmatched
    vanished notes are marked deleted and keep their history; one whose file is back at its path
    (`_put_back`) is live again. A reviewed note whose path holds
    another note now (`_written_anew`) moves to an appeared file with its exact bytes (it was
    renamed, and a new note written under its old name), else stays. Notes that failed to load
    are still present. Returns {old: new} moves, which the caller must log
    (`ReviewService.reconcile`): a replay knows only the log.
    """
    present = {n.path for n in notes} | set(problem_paths)
    known = {row.path: row for row in store.live_notes()}
    vanished = [row for path, row in known.items() if path not in present]
    appeared = [n for n in notes if n.path not in known]
    moves: dict[str, str] = {}
    replaced = _written_anew(store, list(known.values()), notes) if appeared else []
    returned = _put_back(store, list(known.values()), notes)
    if not vanished and not replaced and not returned:
        return {}
    with store.transaction():
        for row in returned:  # its history is its own again (the log never knew it was gone)
            store.update_note(row.key, deleted=False)
            appeared = [n for n in appeared if n.path != row.path]
        for row in replaced:
            match = [n for n in appeared if row.content_hash and n.content_hash == row.content_hash]
            if len(match) == 1:
                appeared.remove(match[0])
                store.update_note(row.key, path=match[0].path)
                moves[row.path] = match[0].path
        for row in vanished:
            match = [n for n in appeared if row.content_hash and n.content_hash == row.content_hash]
            if len(match) != 1:
                match = [n for n in appeared if row.title and n.title == row.title
                         and (has_legacy_history(n.review_count, n.last_reviewed)
                              or not store.has_reviews(row.key))]
            if len(match) == 1:
                note = match[0]
                appeared.remove(note)
                store.update_note(row.key, path=note.path, content_hash=note.content_hash)
                moves[row.path] = note.path
            else:
                store.update_note(row.key, deleted=True)
    return moves


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
