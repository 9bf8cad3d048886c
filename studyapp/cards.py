"""Which note is whose card, and in what order cards come up: note identity across renames,
cards for every note (stored, or derived from the previous tool's history), and the order and
counts of a queue. Pure functions over the store and the scheduler; `review_session` builds
today's queue and a running session from them, `reviews` records what happens."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import date, datetime, timedelta, timezone
from enum import Enum
from typing import TYPE_CHECKING, Any

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

HOP_SUFFIX = "#moving"
"""A swap's moves go through `<old path>#moving`, a name no note has (notes end in .md)."""
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
    """Whether there is anything for `reconcile_identity` to settle: a stored live note's path
    missing from the vault, a stored note's path holding a file with another title that is
    another note (`_written_anew`, `_crossed`), or a deleted note's file back (`_put_back`).
    One pass over paths and titles, so a load with nothing to settle takes no lock."""
    by_path = {n.path: n for n in notes}
    problems = set(problem_paths)
    retitled = False
    live: set[str] = set()
    for path, title in store.live_paths_and_titles():
        live.add(path)
        note = by_path.get(path)
        if note is None:
            if path not in problems:
                return True
        elif title and note.title != title:
            retitled = True
    if retitled:
        rows = store.live_notes()
        if _written_anew(store, rows, by_path) or _crossed(rows, by_path):
            return True
    return bool(_put_back(store, live, by_path))


def _retitled(rows: Sequence, by_path: Mapping[str, Any]) -> list[tuple[Any, Any]]:
    """(row, note) of the stored notes whose path holds a file under another title."""
    return [(row, by_path[row.path]) for row in rows
            if row.title and row.path in by_path and by_path[row.path].title != row.title]


def _crossed(rows: Sequence, by_path: Mapping[str, Any]) -> dict[int, str]:
    """{key: path} of stored notes whose exact bytes now sit at another stored note's path
    (two names swapped; `mv b.md b-old.md; mv c.md b.md`): the history goes with the bytes.
    Only files whose title is not their row's are hashed; a row still holding its own title
    at its own path stays."""
    changed = _retitled(rows, by_path)
    if not changed:
        return {}
    by_hash = {row.content_hash: row for row in rows if row.content_hash}
    by_title: dict[str, list] = {}
    for row in rows:
        by_title.setdefault(row.title, []).append(row)
    found: dict[int, str] = {}
    for row, note in changed:
        other = by_hash.get(note.content_hash)
        if other is None:  # a row the replay made, or bytes edited since: its title, if only it has it
            same = [r for r in by_title.get(note.title, ()) if r is not row]
            other = same[0] if len(same) == 1 and has_legacy_history(note.review_count, note.last_reviewed) else None
        if other is None or other is row:
            continue
        there = by_path.get(other.path)
        if there is None or there.title != other.title:
            found[other.key] = row.path
    return found


def _put_back(store: Store, live: set[str], by_path: Mapping[str, Any]) -> list:
    """Notes marked deleted whose file is back at their path (restored from the trash or a
    backup), with no live note there: the same bytes, or the same title with review keys."""
    found = []
    for row in store.deleted_notes():
        note = by_path.get(row.path)
        if note is not None and row.path not in live and (
                (row.content_hash and note.content_hash == row.content_hash)
                or (row.title and note.title == row.title
                    and has_legacy_history(note.review_count, note.last_reviewed))):
            found.append(row)
    return found


def _written_anew(store: Store, rows: Sequence, by_path: Mapping[str, Any]) -> list:
    """The stored rows of reviewed notes whose path now holds another note: a file whose own
    review keys say it was never reviewed, under another title (`mv b.md b-archive.md`, then a
    new `b.md`). The history left with the file that moved, if one appeared; a stale copy of
    the same note put back keeps its title, and a renamed heading its review keys."""
    return [row for row, note in _retitled(rows, by_path)
            if not has_legacy_history(note.review_count, note.last_reviewed) and store.has_reviews(row.key)]


def _shared_end(path: str, other: str) -> int:
    """How many trailing path components the two paths share."""
    count = 0
    for mine, theirs in zip(reversed(path.split("/")), reversed(other.split("/"))):
        if mine != theirs:
            break
        count += 1
    return count


def _by_closest_first(vanished: list, appeared: list) -> list:
    """The vanished rows, those whose path ends most like an appeared note's with their title
    first: in a renamed folder where one of two same-titled notes was also deleted, the one
    left is the namesake whose path it continues, not whichever row comes first."""
    def best(row) -> int:
        return max((_shared_end(row.path, n.path) for n in appeared if row.title and n.title == row.title),
                   default=0)

    return sorted(vanished, key=best, reverse=True)


def _closest(candidates: list, path: str) -> list:
    """Of several notes with one title, the one whose path ends most like `path` (a renamed
    folder: `ml/rnn/summary.md` is `deep-learning/rnn/summary.md`, not
    `deep-learning/attention/summary.md`); all of them when no one ends closest."""
    if len(candidates) < 2:
        return candidates
    ends = [_shared_end(path, n.path) for n in candidates]
    best = max(ends)
    closest = [n for n, end in zip(candidates, ends) if end == best]
    return closest if best and len(closest) == 1 else candidates


def _swap(store: Store, crossed: dict[int, str], displaced: list, appeared: list) -> dict[str, str]:
    """Give the crossed notes their new paths, and the notes displaced from those paths the file
    with their bytes (else they are deleted). The moves go through a name no note can have
    (`<old>#moving`), all first there and then on: a replay ignores a move onto a path that
    still has a note, as in a swap. Returns the moves in the order to log them."""
    rows = {row.key: row for row in store.live_notes()}
    final: dict[int, str] = dict(crossed)
    for row in displaced:
        match = [n for n in appeared if row.content_hash and n.content_hash == row.content_hash]
        if len(match) == 1:
            appeared.remove(match[0])
            final[row.key] = match[0].path
        else:
            store.update_note(row.key, path=f"\0{row.key}", deleted=True)
    for key in final:
        store.update_note(key, path=f"\0{key}")  # off the live paths first (they are unique)
    hops: dict[str, str] = {}
    for key in final:
        hops[rows[key].path] = f"{rows[key].path}{HOP_SUFFIX}"
    for key, path in final.items():
        store.update_note(key, path=path)
        hops[f"{rows[key].path}{HOP_SUFFIX}"] = path
    for row in displaced:
        if row.key not in final:
            store.update_note(row.key, path=row.path)  # deleted, at its own path again
    return hops


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
    renamed, and a new note written under its old name), else is deleted: the new note starts
    new (a replay tells the two apart by its first review, `replay._another_note_began`). Notes
    that failed to load
    are still present. Returns {old: new} moves, which the caller must log
    (`ReviewService.reconcile`): a replay knows only the log.
    """
    present = {n.path for n in notes} | set(problem_paths)
    known = {row.path: row for row in store.live_notes()}
    by_path = {n.path: n for n in notes}
    crossed = _crossed(list(known.values()), by_path)
    if crossed:  # their paths are taken: the notes displaced from them are matched like vanished ones
        taken = set(crossed.values())
        known = {path: row for path, row in known.items() if row.key not in crossed and path not in taken}
    vanished = [row for path, row in known.items() if path not in present]
    displaced = [row for row in store.live_notes() if row.key not in crossed and row.path in crossed.values()]
    appeared = [n for n in notes if n.path not in known and n.path not in set(crossed.values())]
    moves: dict[str, str] = {}
    replaced = _written_anew(store, list(known.values()), by_path)
    returned = _put_back(store, {row.path for row in store.live_notes()}, by_path)
    if not vanished and not replaced and not returned and not crossed:
        return {}
    with store.transaction():
        if crossed:
            moves.update(_swap(store, crossed, displaced, appeared))
        for row in returned:  # its history is its own again (the log never knew it was gone)
            store.update_note(row.key, deleted=False)
            appeared = [n for n in appeared if n.path != row.path]
        for row in replaced:
            match = [n for n in appeared if row.content_hash and n.content_hash == row.content_hash]
            if len(match) == 1:
                appeared.remove(match[0])
                store.update_note(row.key, path=match[0].path)
                moves[row.path] = match[0].path
            else:  # gone, and another note written in its place: that one starts new
                store.update_note(row.key, deleted=True)
        for row in _by_closest_first(vanished, appeared):
            match = [n for n in appeared if row.content_hash and n.content_hash == row.content_hash]
            if len(match) != 1:
                match = _closest([n for n in appeared if row.title and n.title == row.title
                                  and (has_legacy_history(n.review_count, n.last_reviewed)
                                       or not store.has_reviews(row.key))], row.path)
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
