"""The review session, for every front end: today's queue (daily limits, Anki's order and
counts), and, while a learner reviews, what comes next: rated notes leave, an "again" comes
back after the rest, a note edited outside is taken as it is now, a rating undone outside
(`studyapp undo`, another app) leaves the tally and its note comes back, progress and a summary.

`studyapp due` lists the queue this module builds; the TUI's review screen walks it through
the facade. Textual-free and torch-free.

~425 lines on purpose: the session's queue, its undo stack and what it follows from other
processes (ratings, undos, suspensions, renames) change one state together.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import TYPE_CHECKING

from studyapp import schedule
from studyapp.cards import (
    NoteCard,
    QueueCounts,
    QueueKind,
    note_cards,
    queue_counts,
    queue_kind,
    session_queue,
)
from studyapp.undo_kinds import UndoKind

if TYPE_CHECKING:
    from fsrs import Rating

    from studyapp.live_vault import LiveVault
    from studyapp.reviews import ReviewResult, ReviewService
    from studyapp.store import CardRow
    from studyapp.vault import Note

NO_LIMIT = 10**9
"""Inside a started session the daily limits were already applied when it was built."""


def todays_queue(service: ReviewService, items: list[NoteCard]) -> list[NoteCard]:
    """Today's queue with the daily limits applied (`cards.session_queue` does the order)."""
    return service.queue(items)


@dataclass(frozen=True)
class SessionTally:
    """What a session has done: the ratings given, in order, and how long it has run."""

    reviewed: int
    by_rating: dict[int, int]
    seconds: float


@dataclass(frozen=True)
class UndoStep:
    """What `ReviewSession.undo` reverted; `show` when the note is back in the session, next."""

    kind: UndoKind
    path: str
    """The note's path; for a drill's rating, the drill's id."""
    show: bool
    title: str | None = None
    """What to call it when it is not a note of the vault (a drill's title)."""


def wall_clock() -> datetime:
    """The real time, aware (UTC): what a session's length is measured on. Not the context's
    clock, which `--now` freezes (every session would last 0 s), and not a naive
    `datetime.now()`, local time that runs an hour short or long across a change of the clocks
    and cannot be compared with the context's aware instants."""
    return datetime.now(timezone.utc)


class ReviewSession:
    """One sitting of reviews over a loaded vault, and the undo of the changes made in it.

    `vault` is the front end's `LiveVault` (kept current as files change); the session keeps
    only paths, its counts, the ratings given and what `undo` reverts.
    """

    def __init__(self, service: ReviewService, vault: LiveVault,
                 clock: Callable[[], datetime] = wall_clock) -> None:
        self.service = service
        self.vault = vault
        self.notes: Mapping[str, Note] = vault.notes
        self.clock = clock
        """Wall clock for the session's length, aware (`wall_clock`; the context's clock may
        be frozen)."""
        self.order: list[str] = []
        """Paths still to show, the next one first."""
        self.members: set[str] = set()
        """Every note of the session not yet done with (rated notes may come back)."""
        self.gone: set[str] = set()
        """Notes of the session whose file went away: back in it if the file comes back."""
        self.left: QueueCounts | None = None
        self.ratings: list[tuple[str, int, str | None]] = []
        """The ratings given, in order: (note path, rating, the review's event id in the log)."""
        self.started = clock()
        self.undo_stack: list[tuple[UndoKind, str, bool]] = []
        """What `undo` reverts, newest last: (kind, note path, was in the session)."""
        self.front_mark: tuple | None = None
        """The note in front and its review state when it got there (`_mark`)."""
        self.left_reviewed: dict[str, tuple] = {}
        """Notes that left the session because a review of them was recorded elsewhere, with
        their `_mark` from before it: one whose review was taken back comes back."""
        self.drill_reviews_seen: dict[str, int] = {}
        """Drills rated in this app: how many reviews each had just after (`drill_rated`)."""

    def begin(self, items: list[NoteCard]) -> None:
        """Take today's queue (daily limits applied) as this session's notes."""
        queue = todays_queue(self.service, items)
        self.order = [item.note.path for item in queue]
        self.members = set(self.order)
        self.gone = set()
        self.left = queue_counts(queue, self.service.ctx.now())
        self.ratings = []
        self.left_reviewed = {}
        self.started = self.clock()
        self.front_mark = self._mark()

    def end(self) -> None:
        self.order, self.members, self.gone, self.left = [], set(), set(), None

    @property
    def active(self) -> bool:
        return bool(self.members)

    @property
    def next_path(self) -> str | None:
        return self.order[0] if self.order else None

    def requeue(self, first: str | None = None, keep_first: bool = False) -> None:
        """Order the session's notes again: rated notes leave until due, an "again" comes
        back after the rest. `first` goes in front (an undone rating); `keep_first` keeps the
        note on screen in front while it is still due and no review of it was recorded
        elsewhere (`studyapp rate`, another device) since it got there: such a note leaves the
        session, even when its next learning step is minutes away, so it is not rated twice."""
        shown = self.order[0] if keep_first and self.order else None
        mark = self.front_mark
        if shown is not None and mark is not None and mark[0] == shown and shown in self.notes \
                and self._reviewed_since(mark):
            self.members.discard(shown)
            self.left_reviewed[shown] = mark  # back if that review is taken back (`undone_elsewhere`)
            shown = None
        now = self.service.ctx.now()
        notes = sorted((self.notes[p] for p in self.members if p in self.notes), key=lambda n: n.path)
        items = note_cards(self.service.store, self.service.scheduler, notes, now)
        order = session_queue(items, self.service.scheduler, now, NO_LIMIT, NO_LIMIT)
        self.order = [item.note.path for item in order]
        self.left = queue_counts(order, now)
        front = first if first is not None else shown if shown in self.order else None
        if front is not None:
            self.order = [front] + [p for p in self.order if p != front]
        self.front_mark = self._mark()

    def _mark(self) -> tuple | None:
        """The front note and its review state (last review, count): a review recorded by
        anyone changes it, an edit of the note's text does not."""
        if not self.order or self.order[0] not in self.notes:
            return None
        card, _new = self.card_state(self.order[0])
        return self.order[0], card.last_review, card.reps

    def _reviewed_after(self, path: str, mark: tuple) -> bool:
        """Whether a review of `path` recorded since `mark` (its `_mark` then) still stands."""
        card, _new = self.card_state(path)
        _, last_then, reps_then = mark
        return card.reps > reps_then or (card.last_review is not None
                                         and (last_then is None or card.last_review > last_then))

    def _reviewed_since(self, mark: tuple) -> bool:
        """Whether a review of the front note was recorded since `mark`: its card counts more
        reviews, or a later one. An undo (here or elsewhere) takes one away: the note stays."""
        now = self._mark()
        if now is None or now == mark:
            return False
        _, last_then, reps_then = mark
        _, last_now, reps_now = now
        return reps_now > reps_then or (last_now is not None and (last_then is None or last_now > last_then))

    def card_state(self, path: str) -> tuple[CardRow, bool]:
        """(the note's card now, whether it is new): stored, else derived from its metadata."""
        from studyapp.cards import derive_card, never_reviewed

        store = self.service.store
        row = store.note_by_path(path)
        stored = store.card(row.key) if row is not None else None
        if stored is not None and not never_reviewed(stored):
            return stored, False
        return derive_card(self.notes[path], row.key if row else None, self.service.scheduler,
                           self.service.ctx.now())

    def rate(self, path: str, rating: Rating, duration_seconds: float | None,
             shown: str | None = None) -> ReviewResult:
        """Record the review (`ReviewService.record_review`, which refuses a note that is no
        longer the `shown` one); the note leaves until due again."""
        result = self.service.record_review(path, rating, duration_seconds, shown)
        self.undo_stack.append((UndoKind.RATING, path, True))
        self.vault.written(path)
        self.rated(path, int(rating), result.event_id)
        return result

    def rated(self, path: str, rating: int, event_id: str | None = None) -> None:
        self.ratings.append((path, rating, event_id))
        self.members.add(path)
        self.requeue()

    def drill_rated(self, drill: str) -> None:
        """A drill rated in this app: the newest change, above any suspension on the undo stack
        (`undo` then takes back that rating, the newest review of a note or a drill)."""
        self.undo_stack.append((UndoKind.RATING, drill, False))
        self.drill_reviews_seen[drill] = len(self.service.store.drill_reviews(drill))

    def _drop_drills_undone_elsewhere(self) -> None:
        """Drill ratings on top of the undo stack that another process took back since
        (`studyapp undo`): no longer this app's newest change."""
        while self.undo_stack and self.undo_stack[-1][0] is UndoKind.RATING \
                and (drill := self.undo_stack[-1][1]) in self.drill_reviews_seen \
                and len(self.service.store.drill_reviews(drill)) < self.drill_reviews_seen[drill]:
            self.undo_stack.pop()
            del self.drill_reviews_seen[drill]

    def suspend(self, path: str) -> None:
        """Suspend a note (undoable with `undo`); it leaves the session at once."""
        if self.service.set_suspended(path, True):
            self.undo_stack.append((UndoKind.SUSPENSION, path, path in self.members))
        self.vault.cards_changed()
        self.drop(path)

    def unsuspend(self, path: str) -> None:
        self.service.set_suspended(path, False)
        self.undo_stack = [u for u in self.undo_stack if u[:2] != (UndoKind.SUSPENSION, path)]
        self.vault.cards_changed()

    def undo(self) -> UndoStep | None:
        """Revert the newest change made here (a suspension, else the last recorded review of
        a note or a drill, wherever it was made); None when there is nothing to undo."""
        self._drop_drills_undone_elsewhere()
        resumed = None
        while resumed is None and self.undo_stack and self.undo_stack[-1][0] is UndoKind.SUSPENSION:
            kind, path, in_session = self.undo_stack.pop()
            if self.service.set_suspended(path, False):  # else resumed elsewhere already: skipped
                resumed = path
        if resumed is not None:
            self.vault.written(path)
            show = in_session and path in self.notes
        else:
            from studyapp.drill_reviews import undo_newest_review
            from studyapp.drills import catalog

            drills = catalog(self.service.ctx.paths.drill_memo_file)
            done = undo_newest_review(self.service, drills)
            if done is None:
                return None
            kind, path = UndoKind.RATING, done.key
            if done.kind == "drill":
                if self.undo_stack and self.undo_stack[-1][:2] == (UndoKind.RATING, path):
                    self.undo_stack.pop()
                info = drills.get(path)
                return UndoStep(kind, path, False, info.title if info is not None else path)
            if self.undo_stack and self.undo_stack[-1][:2] == (UndoKind.RATING, path):
                self.undo_stack.pop()
            self.left_reviewed.pop(path, None)  # back by this undo: not one made elsewhere
            self.vault.written(path)
            self.unrated(path)
            show = path in self.notes
        if show:
            self.bring_back(path)
        return UndoStep(kind, path, show)

    def unrated(self, path: str) -> None:
        """An undone rating no longer counts in the tally."""
        for i in range(len(self.ratings) - 1, -1, -1):
            if self.ratings[i][0] == path:
                del self.ratings[i]
                break

    def undone_elsewhere(self) -> list[str]:
        """Ratings of this session that another process took back since (`studyapp undo`,
        another app, another device's undo replayed from its log): each leaves the tally and
        the undo stack, and its note is due in this session again, behind the note shown.
        Returns the notes' paths, in the order they were rated; [] when none (one query)."""
        if not self.members:
            return []
        tracked = [event for _, _, event in self.ratings if event is not None]
        kept = self.service.store.reviews_still_logged(tracked) if tracked else set()
        undone = [i for i, (_, _, event) in enumerate(self.ratings) if event is not None and event not in kept]
        returned = [path for path, mark in self.left_reviewed.items()
                    if path in self.notes and not self._reviewed_after(path, mark)]
        for path in returned:  # rated elsewhere while on screen, and that rating taken back
            del self.left_reviewed[path]
        if not undone and not returned:
            return []
        paths = list(dict.fromkeys([*(self.ratings[i][0] for i in undone), *returned]))
        for i in reversed(undone):
            path = self.ratings.pop(i)[0]
            for j in range(len(self.undo_stack) - 1, -1, -1):
                if self.undo_stack[j][:2] == (UndoKind.RATING, path):
                    del self.undo_stack[j]
                    break
        self.vault.cards_changed()
        for path in paths:
            self.vault.reread_if_changed(path)  # its review keys as the undo left them
            if path in self.notes and path not in self.gone:
                self.members.add(path)
        self.requeue(keep_first=True)
        return paths

    def bring_back(self, path: str) -> None:
        """A note back in the session, shown next (an undone rating or suspension)."""
        self.members.add(path)
        self.requeue(first=path)

    def drop(self, path: str, requeue: bool = True) -> None:
        """A note leaves the session (suspended, deleted or unreadable)."""
        self.members.discard(path)
        self.order = [p for p in self.order if p != path]
        if requeue:
            self.requeue()

    def renamed(self, moves: Mapping[str, str]) -> None:
        """Notes renamed or moved since (`ReviewService.last_moves`, {old: new}) stay in the
        session under their new paths, with their ratings and what undo reverts."""
        if not moves:
            return
        def new(path: str) -> str:
            return moves.get(path, path)

        self.order = [new(p) for p in self.order]
        self.members = {new(p) for p in self.members}
        self.gone = {new(p) for p in self.gone}
        self.ratings = [(new(p), rating, event) for p, rating, event in self.ratings]
        self.undo_stack = [(kind, new(p), kept) for kind, p, kept in self.undo_stack]
        if self.front_mark is not None:
            self.front_mark = (new(self.front_mark[0]), *self.front_mark[1:])
        self.left_reviewed = {new(p): (new(p), *mark[1:]) for p, mark in self.left_reviewed.items()}

    def keep_only(self, paths: Iterable[str]) -> None:
        """After the vault changed: notes that are gone leave, and come back when their file
        does (moved away and back by a sync tool); the one shown stays in front."""
        if not self.members and not self.gone:
            return
        present = set(paths)
        back = self.gone & present
        self.gone = (self.gone | self.members) - present
        self.members = (self.members & present) | back
        self.requeue(keep_first=True)

    def progress(self) -> tuple[QueueCounts, int]:
        """(what is left, as Anki counts it; how many ratings were given)."""
        return self.left or QueueCounts(), len(self.ratings)

    def tally(self) -> SessionTally:
        counts = Counter(rating for _, rating, _ in self.ratings)
        return SessionTally(len(self.ratings), dict(counts), (self.clock() - self.started).total_seconds())


@dataclass
class DueEntry:
    """One line of `studyapp due`: a note in today's queue, with its scheduler facts."""

    note: Note
    is_new: bool
    due_at: datetime
    retrievability: float | None
    suspended: bool
    days_overdue: int | None
    """Whole local days past its due date (0 when due today); None for a new note."""
    kind: QueueKind = QueueKind.REVIEW
    """Which of Anki's counts it adds to."""

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
            "drills_unknown": pairing.unknown,
            "new": self.is_new,
            "days_overdue": self.days_overdue,
            "due_at": self.due_at.astimezone().isoformat(timespec="seconds"),
            "retrievability": None if self.retrievability is None else round(self.retrievability, 4),
            "suspended": self.suspended,
            "queue": self.kind.value,
        }


def due_listing(ctx, snapshot) -> list[DueEntry]:
    """`studyapp due`: today's queue (daily limits, overdue first, then lowest
    retrievability, then new notes) for a loaded vault snapshot."""
    return due_queue(ctx, snapshot)[0]


def due_queue(ctx, snapshot, service: ReviewService | None = None) -> tuple[list[DueEntry], QueueCounts]:
    """`due_listing` and its counts (new · learning · review, as the TUI shows them), with
    the caller's open `service` if it has one (`due` lists the drills with it too)."""
    if service is None:
        from studyapp.reviews import ReviewService

        with ReviewService(ctx) as service:
            return due_queue(ctx, snapshot, service)
    service.reconcile(snapshot)  # renames are logged too: every replay follows them
    now, today = ctx.now(), ctx.today()
    # Only notes that can be due now matter: the queue takes nothing due later.
    items = note_cards(service.store, service.scheduler, snapshot.notes, now, due_by=now)
    queue = todays_queue(service, items)
    entries = [
        DueEntry(
            note=item.note, is_new=item.is_new, due_at=item.card.due,
            retrievability=(None if item.is_new
                            else schedule.retrievability(service.scheduler, item.card, now)),
            suspended=item.card.suspended,
            days_overdue=(None if item.is_new
                          else max((today - item.card.due.astimezone().date()).days, 0)),
            kind=queue_kind(item),
        )
        for item in queue
    ]
    return entries, queue_counts(queue, now)
