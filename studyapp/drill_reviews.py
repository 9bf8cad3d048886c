"""Drills as review items: each drill has its own FSRS card, comes back when due, and is rated
from what happened in the attempt (runs, hints, give-up, time) rather than by the learner's guess.

Torch-free and Textual-free. The pure part (a try, the rating rule, the queue of due drills,
the retention curve) is `drill_rating`, unit-tested on its own; `DrillReviews` here puts it
together with the database, the review log and the learner's workspace. It runs past 400
lines because `DrillReviews` is one service with one state (the try in progress) that the CLI
and the TUI both call: a dozen short methods reading the same marks and cards.

A *try* is one go at a due (or new) drill: it starts when the drill is opened for review (a
`start` mark in the log), and holds every graded run, hint and give-up of that drill until its
review is recorded, or until it is left untouched past the end of the day (`try_lapsed`: a try
abandoned yesterday is not today's recall, but one begun at 23:50 and passed at 00:05 is one
sitting). Runs made outside a try (practising a drill that is not due) schedule nothing.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from datetime import date, datetime, timedelta, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fsrs import Rating, Scheduler, State

from studyapp.drill_rating import (  # the pure part
    DRILL_RATING_LABELS,
    DrillTry,
    DueDrill,
    MarkKind,
    Proposal,
    build_try,
    drill_scheduler,
    due_drills,
    propose_rating,
    weekly_retention,
)
from studyapp.schedule import STORED_MS, day_start, next_day_start, recorded_duration_ms
from studyapp.store import CardRow, DrillReviewRow, utc_text

if TYPE_CHECKING:
    from studyapp.reviews import ReviewService


# -- with the database, the log and the workspace ------------------------------------------


@dataclass(frozen=True)
class DrillReviewResult:
    """What recording a drill review did."""

    drill: str
    rating: int
    proposed: int | None
    due: datetime
    interval: timedelta


@dataclass(frozen=True)
class DrillProgress:
    """One drill as the Drills screen and `studyapp drills` show it."""

    id: str
    title: str
    status: str
    """"not started", "failing" or "passed" (ever passed)."""
    next_due: date | None
    """When its card is due, today for a drill today's session introduces (None: not yet)."""
    due_now: bool
    passes: int
    attempts: int


@dataclass(frozen=True)
class Hint:
    """One rung of a drill's hint ladder."""

    number: int
    of: int
    text: str
    counted: bool = True
    """Counted toward a rating: shown in a try (the drill is due), not in practice."""


class TryAlreadyRated(LookupError):
    """The try a screen offered to rate no longer waits for a rating: another process rated it,
    or (`newer_try`) a newer try of the drill, begun elsewhere, has taken its place."""

    def __init__(self, message: str, newer_try: bool = False) -> None:
        super().__init__(message)
        self.newer_try = newer_try


class NoHintsLeft(Exception):
    """Every hint of the drill has been shown in this try."""


class TryOver(Exception):
    """The try passed or was given up: its rating waits to be recorded, and a hint now would
    count toward nothing (the app offers none then)."""


def workspace_file(ctx, drill: str) -> Path:
    return ctx.paths.workspace_dir / f"{drill}.py"


def backup_workspace_file(path: Path, now: datetime) -> Path | None:
    """Copy the learner's file to `<workspace>/backups/<name>-<time>.py` (None: no file). A
    workspace file that is not a regular file (a FIFO, a folder, a link to a device) is a
    UserError, before anything is written (`drills.read_workspace_file`)."""
    from studyapp.atomic import atomic_write_bytes
    from studyapp.drills import read_workspace_file

    content = read_workspace_file(path)
    if content is None:
        return None
    folder = path.parent / "backups"
    folder.mkdir(parents=True, exist_ok=True)
    stamp = now.astimezone().strftime("%Y%m%d-%H%M%S")
    target = folder / f"{path.stem}-{stamp}{path.suffix}"
    n = 1
    while target.exists():
        n += 1
        target = folder / f"{path.stem}-{stamp}-{n}{path.suffix}"
    atomic_write_bytes(target, content)
    return target


def reviewed_paired_drills(store, notes: Iterable, wanted: set[str]) -> set[str]:
    """Which of the `wanted` drills some note reviewed in studyapp pairs with (declared, else
    suggested). Stops once all are found: pairing a note may read its body."""
    if not wanted:
        return set()
    reviewed = store.reviewed_paths()
    found: set[str] = set()
    for note in notes:
        if note.path in reviewed:
            try:
                found.update(wanted.intersection(note.pairing().drills))
            except (OSError, ValueError):
                continue
            if found == wanted:
                break
    return found


class DrillReviews:
    """Drill cards, tries and reviews for one review service (its store, log, lock, clock)."""

    def __init__(self, service: ReviewService, drills: Mapping[str, Any] | None = None) -> None:
        self.service = service
        self.store = service.store
        self.ctx = service.ctx
        if drills is None:
            from studyapp.kernels_loader import drill_catalog

            drills = drill_catalog(self.ctx.paths.drill_memo_file)
        self.drills = dict(drills)
        """Drill id -> DrillInfo (tests pass their own)."""

    # -- reading ----------------------------------------------------------------------------

    def info(self, drill: str):
        from studyapp.errors import UsageError

        if drill not in self.drills:
            raise UsageError(f"unknown drill {drill!r}; choose from: {', '.join(self.drills)}")
        return self.drills[drill]

    @property
    def scheduler(self) -> Scheduler:
        return drill_scheduler(self.service.scheduler)

    def due(self, notes: Iterable) -> list[DueDrill]:
        """Today's due drills, then the new ones (`new_drills_per_day` applied)."""
        now = self.ctx.now()
        left = (self.ctx.settings.new_drills_per_day  # drills introduced today, midnight to midnight
                - self.store.drills_introduced_since(day_start(now), until=next_day_start(now)))
        order = [(d, info.title) for d, info in self.drills.items()]
        cards = self.store.drill_cards()
        begun = [d for d in self.drills if d not in cards and self.current_try(d) is not None]
        unseen = set() if left <= len(begun) else {d for d in self.drills if d not in cards}
        return due_drills(order, cards, now, reviewed_paired_drills(self.store, notes, unseen), left, begun)

    def in_review(self, drill: str) -> bool:
        """Whether opening the drill now is a review: its card is due, or it has none yet."""
        card = self.store.drill_card(drill)
        return card is None or (not card.suspended and card.due <= self.ctx.now())

    def current_try(self, drill: str) -> DrillTry | None:
        """The try in progress, or finished but not yet recorded; None when there is none.

        Its start mark is the latest one no review has closed; what follows it (runs, hints,
        a give-up) is the try, unless it lapsed (`try_lapsed`): left untouched past the end of
        its day, it ended unrated and today's review is a new try. (Ordered by time, then by
        insertion: a frozen clock is fine.)"""
        marks = self.store.drill_marks(drill)
        starts = [m for m in marks if m.kind == MarkKind.START.value]
        if not starts or starts[-1].event_id in self.store.closed_tries(drill):
            return None
        start = starts[-1]
        after = marks[marks.index(start):]
        rows = [r for r in self.store.drill_attempts(drill) if r.attempted_at >= start.at]
        touched = [r.attempted_at for r in rows] + [m.at for m in after[1:]]
        if try_lapsed(start.at, touched, self.ctx.now()):
            return None
        attempts = [(r.attempted_at, r.verdict == "pass") for r in rows]
        hints = [m.at for m in after if m.kind == MarkKind.HINT.value]
        giveups = [m.at for m in after if m.kind == MarkKind.GIVEUP.value]
        attempt = build_try(drill, start.at, attempts, hints, giveups[0] if giveups else None)
        # a mark from before the log had event ids is known by its time
        return replace(attempt, id=start.event_id or utc_text(start.at))

    def _start_mark(self, drill: str) -> str | None:
        starts = [m for m in self.store.drill_marks(drill) if m.kind == MarkKind.START.value]
        return starts[-1].event_id if starts else None

    def past_seconds(self, drill: str) -> list[float]:
        """Durations of earlier reviews of the drill that ended in a pass (not a give-up)."""
        return [review.duration_ms / 1000 for review in self.store.drill_reviews(drill)
                if review.duration_ms and not review.gave_up and review.rating != Rating.Again]

    def proposal(self, drill: str) -> Proposal | None:
        attempt = self.current_try(drill)
        if attempt is None:
            return None
        proposal = propose_rating(attempt, self.past_seconds(drill))
        if proposal is not None and attempt.passed:
            last = self.store.last_drill_attempt(drill)  # a run after the pass that ended the try
            if last is not None and last.verdict != "pass":
                proposal = replace(proposal, reason=f"{proposal.reason}; the latest run fails, "
                                                    "the try's pass still counts")
        return proposal

    def reference(self, drill: str) -> str | None:
        """The reference solution, only once the current try passed or was given up (or,
        outside a try, once the latest run passed or after a give-up); None before that. Raises LookupError when
        the drill ships no reference yet."""
        attempt = self.current_try(drill)
        if attempt is not None:
            allowed = attempt.finished
        else:  # practice: the latest run passed, or the learner gave up since the last review
            rows = self.store.drill_attempts(drill)
            last = self.store.last_drill_review_at(drill)
            allowed = (bool(rows) and rows[-1].verdict == "pass") or any(
                m.kind == MarkKind.GIVEUP.value for m in self.store.drill_marks(drill, since=last))
        if not allowed:
            return None
        path = self.info(drill).reference_path
        if path is None or not Path(path).is_file():
            raise LookupError(f"the drill {drill!r} ships no reference solution yet")
        return Path(path).read_text(encoding="utf-8")

    def progress(self, notes: Iterable | None = None) -> list[DrillProgress]:
        """Every drill's progress. With the vault's `notes`, a drill that today's session
        introduces (no card yet) is due now, as `due` and the session show it."""
        from studyapp.drills import status as drill_status

        cards = self.store.drill_cards()
        status = drill_status(self.store)  # as the lists show it: given up and rated is "failing"
        counts = self.store.drill_attempt_counts()
        now = self.ctx.now()
        new_today = set() if notes is None else {d.id for d in self.due(notes) if d.is_new}
        rows = []
        for drill, info in self.drills.items():
            card = cards.get(drill)
            passes, attempts = counts.get(drill, (0, 0))
            if card is None:
                due_now = drill in new_today
                next_due = now.astimezone().date() if due_now else None
            else:
                due_now = not card.suspended and card.due <= now
                next_due = card.due.astimezone().date()
            rows.append(DrillProgress(drill, info.title, status.get(drill, "not started"),
                                      next_due, due_now, passes, attempts))
        return rows

    def retention_by_week(self, weeks: int = 26) -> tuple[tuple[date, float], ...]:
        now = self.ctx.now()
        return weekly_retention(self.store.drill_reviews(), now - timedelta(weeks=weeks))

    # -- writing ----------------------------------------------------------------------------

    def _log(self, kind, **data) -> str:
        from studyapp.history.events import new_event
        from studyapp.history.sync import record

        event = new_event(kind, self.ctx.now(), self.service.history_log.device, None, **data)
        record(self.store, self.service.history_log, event)
        return event.id

    def _mark(self, drill: str, kind: MarkKind) -> None:
        from studyapp.history.events import EventKind

        event_kind = {MarkKind.START: EventKind.DRILL_START, MarkKind.HINT: EventKind.DRILL_HINT,
                      MarkKind.GIVEUP: EventKind.DRILL_GIVEUP}[kind]
        with self.store.transaction():
            event_id = self._log(event_kind, drill=drill)
            self.store.add_drill_mark(drill, kind.value, self.ctx.now(), event_id)

    def begin(self, drill: str) -> tuple[Path, Path | None]:
        """Open the drill for review when it is due (or new): start a try unless one is
        already going, and put a fresh copy of the starter in the workspace so it is written
        from memory (the learner's file is backed up): for a drill that comes back due, and for
        a new one whose file holds earlier practice (it passed at once, for Good).
        Returns (the workspace file, the backup made or None)."""
        from studyapp.atomic import atomic_write_bytes
        from studyapp.drills import read_workspace_file

        info = self.info(drill)
        path = workspace_file(self.ctx, drill)
        backup = None
        with self.service.writer_lock.hold():
            if not self.in_review(drill) or self.current_try(drill) is not None:
                return path, None
            starter = Path(info.starter_path).read_bytes()
            mine = read_workspace_file(path)  # a FIFO or a device there: refused, nothing written
            if mine != starter:
                if mine is not None:
                    backup = backup_workspace_file(path, self.ctx.now())
                path.parent.mkdir(parents=True, exist_ok=True)
                atomic_write_bytes(path, starter)
            self._mark(drill, MarkKind.START)
        return path, backup

    def _ensure_try(self, drill: str) -> None:
        if self.in_review(drill) and self.current_try(drill) is None:
            self._mark(drill, MarkKind.START)

    def hint(self, drill: str) -> Hint:
        """Reveal the next hint of the ladder (recorded with the try); NoHintsLeft at the end,
        TryOver once the try passed or was given up."""
        hints = tuple(self.info(drill).hints)
        with self.service.writer_lock.hold():
            self._ensure_try(drill)
            attempt = self.current_try(drill)
            if attempt is not None and attempt.finished:
                raise TryOver(f"the try of {drill} is over: {self._rating_waits(drill)}")
            used = attempt.hints if attempt is not None else self._hints_outside_try(drill)
            if used >= len(hints):
                raise NoHintsLeft(f"all {len(hints)} hints of {drill} are shown")
            self._mark(drill, MarkKind.HINT)
        return Hint(used + 1, len(hints), hints[used], counted=attempt is not None)

    def hints_shown(self, drill: str) -> list[Hint]:
        """The hints revealed so far in the current try (or since the last review)."""
        hints = tuple(self.info(drill).hints)
        attempt = self.current_try(drill)
        used = attempt.hints if attempt is not None else self._hints_outside_try(drill)
        return [Hint(i + 1, len(hints), hints[i]) for i in range(min(used, len(hints)))]

    def _hints_outside_try(self, drill: str) -> int:
        """Hints shown since the drill's last review, when no try is going (practice)."""
        last = self.store.last_drill_review_at(drill)
        return sum(1 for m in self.store.drill_marks(drill, since=last) if m.kind == MarkKind.HINT.value)

    def _rating_waits(self, drill: str) -> str:
        """Said of a finished try (passed, or given up): its rating waits to be recorded."""
        proposal = self.proposal(drill)
        return f"its rating{f' ({proposal.label})' if proposal is not None else ''} waits to be recorded"

    def give_up_rates(self, drill: str) -> bool:
        """Whether giving up now rates the drill Again: a try is going, or opening the drill now
        would start one (it is due). Practice on a drill that is not due rates nothing."""
        attempt = self.current_try(drill)
        return not attempt.finished if attempt is not None else self.in_review(drill)

    def give_up_question(self, what: str, drill: str) -> str:
        """The question both front ends ask before `give_up`, saying what it will do (a try
        that ended elsewhere, given up or passed, keeps the rating it earned)."""
        attempt = self.current_try(drill)
        if attempt is not None and attempt.finished:
            outcome = f"the try is over already: {self._rating_waits(drill)}"
        elif attempt is not None or self.in_review(drill):
            outcome = "the try is rated Again"
        else:
            outcome = "the drill is not due, so nothing is rated"
        return f"Give up {what}? Its reference solution is shown and {outcome}."

    def give_up(self, drill: str) -> str:
        """Give up the current try (it will be rated Again; see `give_up_rates`) and return the
        reference solution."""
        info = self.info(drill)
        with self.service.writer_lock.hold():
            self._ensure_try(drill)
            attempt = self.current_try(drill)
            if attempt is None or not attempt.finished:
                self._mark(drill, MarkKind.GIVEUP)
        if info.reference_path is None or not Path(info.reference_path).is_file():
            raise LookupError(f"the drill {drill!r} ships no reference solution yet")
        return Path(info.reference_path).read_text(encoding="utf-8")

    def record(self, drill: str, rating: int | None = None,
               this_try: Proposal | None = None) -> DrillReviewResult:
        """Record the drill's review: the proposed rating, or `rating` (1-4) overriding it.

        Without a finished try a rating must be given. `this_try` is the proposal a screen
        shows: only the try it was made for is rated (with its rating when none is given), and
        `TryAlreadyRated` says that try no longer waits: another process rated it, or a newer
        try made elsewhere took its place (checked under the writer lock). The try's time is
        the review duration; its runs, hints and give-up go with the review into the log."""
        from studyapp.errors import UsageError
        from studyapp.history.events import EventKind, new_event
        from studyapp.history.replay import review_for_event
        from studyapp.history.sync import record

        self.info(drill)
        with self.service.writer_lock.hold():
            attempt = self.current_try(drill)
            proposal = None
            if attempt is not None:
                proposal = propose_rating(attempt, self.past_seconds(drill))
            if this_try is not None:
                if proposal is None:
                    raise TryAlreadyRated(f"{drill}: no try waits for a rating (rated elsewhere?)")
                if proposal.try_id != this_try.try_id:
                    raise TryAlreadyRated(f"{drill}: the try shown no longer waits for a rating; a "
                                          "newer try, made elsewhere, does", newer_try=True)
                if rating is None:
                    rating = int(this_try.rating)  # what the screen said Enter records
            if rating is None:
                if proposal is None:
                    raise UsageError(f"{drill}: nothing to rate yet (pass the drill or give up "
                                     "first, or give a rating)")
                rating = int(proposal.rating)
            if rating not in DRILL_RATING_LABELS:
                raise UsageError(f"rating must be 1-4, got {rating}")
            now = self.ctx.now()
            stored = self.store.drill_card(drill)
            before = stored if stored is not None else new_drill_card(now)
            seconds = attempt.seconds if attempt is not None else None
            duration_ms = None if seconds is None else recorded_duration_ms(seconds * 1000)
            scheduler = self.scheduler
            event = new_event(
                EventKind.DRILL_REVIEW, now, self.service.history_log.device, None,
                drill=drill, rating=rating, proposed=None if proposal is None else int(proposal.rating),
                duration_ms=duration_ms, hints=attempt.hints if attempt else 0,
                runs=len(attempt.runs) if attempt else 0,
                failed_runs=attempt.failed_runs if attempt else 0,
                gave_up=bool(attempt and attempt.gave_up), fuzz=scheduler.enable_fuzzing)
            after = review_for_event(scheduler, before, Rating(rating), now, duration_ms, event.id)
            after = replace(after, suspended=before.suspended)
            if attempt is not None:
                event.data["try"] = self._start_mark(drill)
            with self.store.transaction():
                record(self.store, self.service.history_log, event)
                self.store.put_drill_card(drill, after)
                self.store.insert_drill_review(drill_review_row(
                    event.id, drill, event.data, stored, after, now))
        return DrillReviewResult(drill, rating, event.data["proposed"], after.due, after.due - now)

    def undo_last(self, review: DrillReviewRow | None = None) -> tuple[str, int]:
        """Take back the newest drill review (or `review`, this device's newest): its card is
        the one it started from, the log says so (an undo event), and its try is open to be
        rated again. Returns (drill id, rating); UserError when there is none."""
        from studyapp.errors import UserError
        from studyapp.history.events import EventKind, new_event
        from studyapp.history.sync import record

        with self.service.writer_lock.hold():
            last = self.store.last_drill_review() if review is None else \
                self.store.last_drill_review_of(review.drill_id)
            if last is None:
                raise UserError("nothing to undo: no drill review has been recorded")
            if review is not None and last.id != review.id:
                raise UserError(f"cannot undo this device's review of drill {review.drill_id}: "
                                "it was reviewed again since (on another device, or undone "
                                "meanwhile); nothing was changed")
            before = CardRow.from_json(last.card_before) if last.card_before else None
            if before is None and last.state_before is not None:
                raise UserError(f"cannot undo the review of drill {last.drill_id}: it was "
                                "recorded by an older studyapp, without the card it started from")
            with self.store.transaction():
                if last.event_id is not None:
                    record(self.store, self.service.history_log, new_event(
                        EventKind.UNDO, self.ctx.now(), self.service.history_log.device, None,
                        review=last.event_id, drill=last.drill_id))
                self.store.remove_drill_review(last.id, last.drill_id, before)
        return last.drill_id, last.rating

    def reset(self, drill: str) -> Path | None:
        """Put the starter back in the workspace; returns the backup of the learner's file."""
        from studyapp.atomic import atomic_write_bytes

        info = self.info(drill)
        path = workspace_file(self.ctx, drill)
        backup = backup_workspace_file(path, self.ctx.now())
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_bytes(path, Path(info.starter_path).read_bytes())
        return backup


@dataclass(frozen=True)
class UndoneReview:
    """What `undo_newest_review` took back."""

    kind: str
    """"note" or "drill"."""
    key: str
    """The note's path, or the drill's id."""
    rating: str
    """The rating taken back, by name (again, hard, good, easy)."""
    exact: bool = True
    """For a note: its bytes came back exactly (False: only its review keys)."""
    bytes_kept: bool = True
    """For a note: its bytes from before the review were kept (not when the cache was rebuilt
    from the log since): not exact with them kept means the note was edited since."""


def undo_newest_review(service: ReviewService, drills: Mapping[str, Any] | None = None
                       ) -> UndoneReview | None:
    """Take back this device's most recent review, of a note or of a drill (the CLI's `undo`
    and the app's `u`); None when no review was ever recorded. Another device's reviews are
    that device's to undo, and one of this device's under a later review from another device
    is refused (taking it back would rewind the note under that review).

    Chosen holding the writer lock, once the cache has caught up with the log: an app open for
    a while had not yet replayed another device's later review of the note (and took it back
    from under it), nor followed its own log moved by `history-log` (every review looked like
    another device's), nor noticed the database given to another vault."""
    with service.writer_lock.hold():
        service.sync()
        return _undo_newest_review(service, drills)


def _undo_newest_review(service: ReviewService, drills: Mapping[str, Any] | None
                        ) -> UndoneReview | None:
    from studyapp.schedule import rating_name

    own = service.history_log.own_ids()

    def ours(event_id: str | None) -> bool:  # no id: recorded before the log, on this device
        return event_id is None or event_id in own

    last_note = next((r for r in service.store.newest_reviews() if ours(r.event_id)), None)
    last_drill = next((r for r in service.store.newest_drill_reviews() if ours(r.event_id)), None)
    if last_note is None and last_drill is None:
        if service.store.last_review() is None and service.store.last_drill_review() is None:
            return None
        from studyapp.errors import UserError

        raise UserError("nothing to undo on this device: every review here was made on another "
                        "device (undo one there)")
    if last_drill is not None and (last_note is None or last_drill.reviewed_at >= last_note.reviewed_at):
        drill, rating = DrillReviews(service, drills).undo_last(last_drill)
        return UndoneReview("drill", drill, rating_name(rating))
    done = service.undo_last(last_note)
    return UndoneReview("note", done["path"], done["rating"], done["exact"], done["bytes_kept"])


TRY_GRACE = timedelta(hours=4)
"""How long a try touched late in the evening goes on past midnight without being touched."""


def try_lapsed(started_at: datetime, touched: Iterable[datetime], now: datetime) -> bool:
    """Whether a try begun at `started_at` has ended unrated by `now`, its runs, hints and
    give-up made at the `touched` instants.

    Each touch (the start too) keeps the try going to the end of its local day, or for
    `TRY_GRACE` when that is later: begun at 23:50 and passed at 00:05, it is one try, rated at
    00:06 and kept (with its file) by `start` at 00:10; begun yesterday morning and left, it is
    over, and a run today does not bring it back (it came after the try lapsed: practice)."""
    def lapses_at(moment: datetime) -> datetime:
        return max(next_day_start(moment), moment + TRY_GRACE)

    deadline = lapses_at(started_at)
    for moment in sorted(t for t in touched if t <= now):
        if moment >= deadline:
            break
        deadline = max(deadline, lapses_at(moment))
    return now >= deadline


def new_drill_card(now: datetime) -> CardRow:
    """A drill never reviewed: a new FSRS card due now (note_key 0: drills are keyed by id)."""
    return CardRow(note_key=0, state=int(State.Learning), step=0, stability=None,
                   difficulty=None, due=now.astimezone(timezone.utc), last_review=None)


def drill_review_row(event_id: str, drill: str, data: Mapping[str, Any], before: CardRow | None,
                     after: CardRow, at: datetime) -> dict[str, Any]:
    """The `drill_reviews` row of one drill review (live and replayed alike)."""
    return {
        "drill_id": drill, "rating": int(data["rating"]), "proposed": data.get("proposed"),
        "reviewed_at": utc_text(at), "duration_ms": recorded_duration_ms(data.get("duration_ms"), STORED_MS),
        "hints": int(data.get("hints") or 0), "runs": int(data.get("runs") or 0),
        "failed_runs": int(data.get("failed_runs") or 0), "gave_up": int(bool(data.get("gave_up"))),
        "state_before": None if before is None else before.state, "state_after": after.state,
        "stability_before": None if before is None else before.stability,
        "stability_after": after.stability,
        "due_before": None if before is None else utc_text(before.due),
        "due_after": utc_text(after.due), "try_start": data.get("try"), "event_id": event_id,
        "card_before": None if before is None else before.to_json(),
    }
