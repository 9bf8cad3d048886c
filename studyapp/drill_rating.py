"""The pure part of drills as review items: a try, the rating rule, the queue of due drills
and the retention curve. No database, no files: `drill_reviews` puts these together with the
store, the review log and the workspace, and the tests check the rule here on its own.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import date, datetime, timedelta
from enum import Enum

from fsrs import Rating, Scheduler, State

from studyapp.store import CardRow, DrillReviewRow

FAST_SHARE = 0.5
"""A first-run pass without hints is Easy when it took under this share of the learner's own
median time for the drill (over earlier passed reviews of it)."""
FAST_MIN_HISTORY = 2
"""Passed reviews of a drill needed before "fast" means anything (fewer: never Easy)."""
TRY_SECONDS_CAP = 2 * 60 * 60
"""A try's recorded duration is capped (a drill left open overnight is not a 10-hour review)."""
DRILL_RATING_LABELS = {1: "Again", 2: "Hard", 3: "Good", 4: "Easy"}


class MarkKind(str, Enum):
    """What a drill mark records (besides graded runs, which are drill attempts)."""

    START = "start"
    """A try began: the drill was opened for review (with a fresh copy of the starter)."""
    HINT = "hint"
    """The next hint of the ladder was shown."""
    GIVEUP = "giveup"
    """The learner gave up and the reference solution was shown."""


# -- the pure part -------------------------------------------------------------------------


@dataclass(frozen=True)
class DrillTry:
    """What happened in one try at a drill, in the order it happened."""

    drill: str
    started_at: datetime
    runs: tuple[bool, ...] = ()
    """Each graded run until the first pass (inclusive): True passed, False failed or errored."""
    hints: int = 0
    """Hints revealed during the try (before it ended)."""
    gave_up: bool = False
    ended_at: datetime | None = None
    """The first pass or the give-up, whichever came first; None while the try goes on."""
    id: str | None = None
    """Which try it is: its start mark's event id (None for a try built without one)."""

    @property
    def passed(self) -> bool:
        return bool(self.runs) and self.runs[-1] and not self.gave_up

    @property
    def finished(self) -> bool:
        return self.ended_at is not None

    @property
    def failed_runs(self) -> int:
        return sum(1 for ok in self.runs if not ok)

    @property
    def seconds(self) -> float | None:
        """Time from the start of the try to its end (capped), None while it goes on."""
        if self.ended_at is None:
            return None
        return min(max((self.ended_at - self.started_at).total_seconds(), 0.0), TRY_SECONDS_CAP)


@dataclass(frozen=True)
class Proposal:
    """The rating a finished try earns, and why, shown before it is recorded."""

    rating: Rating
    reason: str
    try_id: str | None = None
    """The try it is for (`DrillTry.id`): a screen rates that try only, never a newer one."""

    @property
    def label(self) -> str:
        return DRILL_RATING_LABELS[int(self.rating)]


def fast_limit(past_seconds: Sequence[float]) -> float | None:
    """Seconds under which a clean pass counts as fast: half the learner's median time over
    earlier passed reviews of this drill; None with too little history to say."""
    usable = [s for s in past_seconds if s is not None and s > 0]
    if len(usable) < FAST_MIN_HISTORY:
        return None
    import statistics  # with `fractions` and `decimal`: only when a try is rated

    return FAST_SHARE * statistics.median(usable)


def propose_rating(attempt: DrillTry, past_seconds: Sequence[float] = ()) -> Proposal | None:
    """The rating rule (README, "Drills come back when due"); None while the try goes on.

    - gave up (the reference was shown): Again
    - passed after a failed run, or after a hint: Hard
    - passed on the first run with no hint: Good, or Easy when faster than `fast_limit`
    """
    proposal = _proposed(attempt, past_seconds)
    return None if proposal is None else replace(proposal, try_id=attempt.id)


def _proposed(attempt: DrillTry, past_seconds: Sequence[float]) -> Proposal | None:
    if not attempt.finished:
        return None
    if attempt.gave_up:
        return Proposal(Rating.Again, "gave up: the reference was shown")
    helped = []
    if attempt.failed_runs:
        helped.append(f"{attempt.failed_runs} failed run{'s' if attempt.failed_runs != 1 else ''}")
    if attempt.hints:
        helped.append(f"{attempt.hints} hint{'s' if attempt.hints != 1 else ''}")
    if helped:
        return Proposal(Rating.Hard, "passed after " + " and ".join(helped))
    limit = fast_limit(past_seconds)
    seconds = attempt.seconds
    if limit is not None and seconds is not None and seconds < limit:
        return Proposal(Rating.Easy, f"passed first time in {_duration(seconds)}, under half your "
                                     f"median ({_duration(2 * limit)})")
    return Proposal(Rating.Good, "passed on the first run with no hint")


def _duration(seconds: float) -> str:
    minutes, secs = divmod(round(seconds), 60)
    return f"{minutes}m {secs:02d}s" if minutes else f"{secs}s"


def build_try(drill: str, started_at: datetime, attempts: Iterable[tuple[datetime, bool]],
              hints: Iterable[datetime], gave_up_at: datetime | None) -> DrillTry:
    """A try from the events after its start: runs `(time, passed)`, hint times, give-up time."""
    runs: list[bool] = []
    ended: datetime | None = None
    for at, ok in sorted(attempts, key=lambda run: run[0]):  # runs at one instant: as recorded
        if at < started_at or (gave_up_at is not None and at > gave_up_at):
            continue
        runs.append(ok)
        if ok:
            ended = at
            break
    gave_up = gave_up_at is not None and (ended is None or gave_up_at <= ended)
    if gave_up:
        ended = gave_up_at
    used = sum(1 for at in hints if at >= started_at and (ended is None or at <= ended))
    return DrillTry(drill, started_at, tuple(runs), used, gave_up, ended)


def drill_scheduler(scheduler: Scheduler) -> Scheduler:
    """The notes' scheduler without learning steps: a drill takes minutes and is rated from a
    whole attempt, so it never comes back 10 minutes later; Again brings it back tomorrow."""
    return Scheduler(parameters=scheduler.parameters, desired_retention=scheduler.desired_retention,
                     learning_steps=(), relearning_steps=(),
                     maximum_interval=scheduler.maximum_interval,
                     enable_fuzzing=scheduler.enable_fuzzing)


@dataclass(frozen=True)
class DueDrill:
    """A drill in today's session."""

    id: str
    title: str
    is_new: bool
    due_at: datetime


def due_drills(order: Sequence[tuple[str, str]], cards: Mapping[str, CardRow], now: datetime,
               eligible_new: set[str], new_left: int, begun: Iterable[str] = ()) -> list[DueDrill]:
    """Today's drills: the due ones (earliest due first), then new ones in catalog order, at
    most `new_left`. `order`: (id, title) of every drill; `eligible_new`: drills with no card
    yet that some reviewed note pairs with (they are introduced then); `begun`: new drills
    whose try began today, which come first and always stay (a note reviewed later must not
    push the drill the learner is writing out of the day)."""
    titles = dict(order)
    due = sorted((card.due, drill) for drill, card in cards.items()
                 if drill in titles and not card.suspended and card.due <= now)
    result = [DueDrill(drill, titles[drill], False, at) for at, drill in due]
    started = {drill for drill in begun if drill not in cards}
    for drill, title in order:
        if drill in started:
            result.append(DueDrill(drill, title, True, now))
            new_left -= 1
    for drill, title in order:
        if new_left <= 0:
            break
        if drill not in cards and drill in eligible_new and drill not in started:
            result.append(DueDrill(drill, title, True, now))
            new_left -= 1
    return result


def weekly_retention(reviews: Iterable[DrillReviewRow], since: datetime) -> tuple[tuple[date, float], ...]:
    """Share of drill reviews of graduated cards (state Review before) not rated Again, per
    Monday-dated local week from `since`: the drills' retention curve."""
    weeks: dict[date, list[int]] = defaultdict(lambda: [0, 0])
    for review in reviews:
        at = review.reviewed_at
        if at < since or review.state_before != State.Review:
            continue
        day = at.astimezone().date()
        monday = day - timedelta(days=day.weekday())
        weeks[monday][0] += 1
        weeks[monday][1] += review.rating != Rating.Again
    return tuple((week, passed / total) for week, (total, passed) in sorted(weeks.items()))
