"""FSRS scheduling for notes: the scheduler from settings, cards from the previous tool's
history, interval previews and retrievability (mastery, built on these, is `studyapp.mastery`).

This wraps the `fsrs` package (Scheduler, Card, Rating, State); it never schedules by itself.
No torch here: fitting parameters lives in `studyapp.optimize`.
"""

from __future__ import annotations

import math
import time as _time
from collections.abc import Sequence
from datetime import date, datetime, time, timedelta, timezone

from fsrs import Card, Rating, Scheduler, State

from studyapp.config import Settings
from studyapp.store import CardRow

RATINGS = {"again": Rating.Again, "hard": Rating.Hard, "good": Rating.Good, "easy": Rating.Easy}

LEGACY_LADDERS = {
    "easy": (1, 3, 7, 15, 30, 60, 120),
    "medium": (1, 2, 5, 10, 21, 45, 90),
    "hard": (1, 1, 3, 7, 14, 30, 60),
}
"""The previous tool's fixed intervals by difficulty label, indexed by min(review_count, 6)."""

_LABEL_RATING = {"easy": Rating.Easy, "medium": Rating.Good, "hard": Rating.Hard}


MAX_REVIEW_SECONDS = 86_400
"""The longest a new review (or a drill's try) is recorded as taking: a day. Longer is no review
time (a card left open overnight): `--duration` refuses it, the app records it as unknown."""
STORED_MS = 2**63 - 1
"""The most a history already written may hold (SQLite's largest integer): a log line or a
journal row past it (another program, a hand edit) is replayed with its time unknown."""


def recorded_duration_ms(value: object, most: int = MAX_REVIEW_SECONDS * 1000) -> int | None:
    """A review's duration as the history keeps it: whole milliseconds from 0 to `most` (a day
    for a new review; `STORED_MS` when replaying one already recorded), else None (unknown).
    Log lines and journal rows pass through here, so a value SQLite cannot hold (10**20, a
    string, NaN) never reaches the database."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    if not 0 <= value <= most:  # NaN fails too
        return None
    return int(round(value))


def parse_rating(text: str) -> Rating:
    """`again|hard|good|easy` (or 1-4, Anki's keys) to a Rating; ValueError otherwise."""
    key = text.strip().lower()
    if key in RATINGS:
        return RATINGS[key]
    if key in {"1", "2", "3", "4"}:
        return Rating(int(key))
    raise ValueError(f"rating must be again, hard, good or easy, or 1-4 (got {text!r})")


def rating_name(rating: int) -> str:
    return Rating(rating).name.lower()


def build_scheduler(settings: Settings, parameters: Sequence[float] | None = None,
                    fuzz: bool = True) -> Scheduler:
    """An FSRS scheduler from the user's settings and, when fitted, their own parameters."""
    kwargs = {}
    if parameters is not None:
        kwargs["parameters"] = tuple(parameters)
    return Scheduler(
        desired_retention=settings.desired_retention,
        learning_steps=tuple(timedelta(minutes=m) for m in settings.learning_steps_minutes),
        relearning_steps=tuple(timedelta(minutes=m) for m in settings.relearning_steps_minutes),
        maximum_interval=settings.maximum_interval,
        enable_fuzzing=fuzz,
        **kwargs,
    )


def scheduler_for(ctx, store) -> Scheduler:
    """The scheduler one run uses: fitted parameters if any; fuzzing off under a frozen clock.
    A stored set FSRS cannot use (NaN, from a fit before `optimize` checked them) is passed
    over for the defaults: it stopped every command that built a scheduler."""
    fitted = store.latest_params()
    if fitted is not None and unusable_parameters(fitted) is not None:
        fitted = None
    return build_scheduler(ctx.settings, fitted, fuzz=not ctx.clock_is_frozen)


def unusable_parameters(parameters: object) -> str | None:
    """Why FSRS (this version: FSRS-6's 21 parameters, each within the bounds `fsrs` checks
    and the review log's reader takes) cannot use `parameters`; None when it can. A set it
    cannot use, once stored, stops every command that builds a scheduler."""
    from fsrs.scheduler import LOWER_BOUNDS_PARAMETERS, UPPER_BOUNDS_PARAMETERS

    if not isinstance(parameters, (list, tuple)):
        return "not a list of numbers"
    if len(parameters) != len(LOWER_BOUNDS_PARAMETERS):
        return f"{len(parameters)} parameters where FSRS-6 has {len(LOWER_BOUNDS_PARAMETERS)}"
    for index, (value, low, high) in enumerate(zip(parameters, LOWER_BOUNDS_PARAMETERS,
                                                   UPPER_BOUNDS_PARAMETERS)):
        if type(value) not in (int, float) or not math.isfinite(value) or not low <= value <= high:
            return f"parameter {index} is {value!r}, outside {low:g} to {high:g}"
    return None


def to_fsrs(row: CardRow) -> Card:
    return Card(card_id=row.note_key, state=State(row.state), step=row.step,
                stability=row.stability, difficulty=row.difficulty, due=row.due,
                last_review=row.last_review)


def updated_row(row: CardRow, card: Card, rating: Rating) -> CardRow:
    """`row` after FSRS produced `card` for `rating`: counters kept by us, not by fsrs."""
    lapsed = rating == Rating.Again and row.state == State.Review
    return CardRow(
        note_key=row.note_key, state=int(card.state), step=card.step,
        stability=card.stability, difficulty=card.difficulty,
        due=card.due, last_review=card.last_review, suspended=row.suspended,
        reps=row.reps + 1, lapses=row.lapses + int(lapsed), legacy=row.legacy,
    )


def new_card(note_key: int, now: datetime) -> CardRow:
    """A note never reviewed by anyone: FSRS learning state, due now."""
    return CardRow(note_key=note_key, state=int(State.Learning), step=0, stability=None,
                   difficulty=None, due=now.astimezone(timezone.utc), last_review=None)


def start_of_day(day: date) -> datetime:
    """Local midnight of `day`, in UTC: a note due on a date is due all of that day.

    The first instant of that local day: where the clocks skip midnight (America/Santiago,
    America/Havana spring forward at 00:00) the day begins when they jump (01:00); where
    midnight comes twice, at the first one. Each zone has its own answers (the cache is keyed
    by the zone, which tests and `TZ=... time.tzset()` change within a process)."""
    if _time.tzname is not _zone[0]:  # `time.tzset()` ran: another zone, other answers
        _zone[:] = [_time.tzname, {}]
    days = _zone[1]
    first = days.get(day)
    if first is None:
        if len(days) >= 4096:
            days.clear()
        first = days[day] = _first_instant(day)
    return first


def day_start(now: datetime) -> datetime:
    """The start of the local day that contains the instant `now`, in UTC (daily limits count
    from it). Not `now.astimezone().replace(hour=0)`: that keeps the offset of `now`, an hour
    off on the days the clocks change."""
    return start_of_day(now.astimezone().date())


def next_day_start(now: datetime) -> datetime:
    """The end of the local day that contains `now`: the start of the next one, in UTC."""
    return start_of_day(now.astimezone().date() + timedelta(days=1))


_zone: list = [None, {}]
"""[the `time.tzname` object of the zone the answers are for, {day: first instant}]:
`time.tzset()` binds a new tuple there, so the answers are dropped only after one (reading the
environment for a key on each of a vault's notes cost 13 % of a warm `due`)."""


def _local_wall(moment: datetime) -> datetime:
    """The local wall-clock time of an instant, naive (fold cleared)."""
    return datetime.fromtimestamp(moment.timestamp()).replace(fold=0)


def _wall_readings(wall: datetime) -> tuple[list[datetime], list[datetime]]:
    """A naive local time read as before and as after a change of offset (UTC instants, in
    order), and those of them that show `wall` on the local clock: for a time that exists these
    agree (or, twice over, give both), for a skipped one they straddle it and none shows it."""
    candidates = sorted({wall.replace(fold=fold).astimezone().astimezone(timezone.utc)
                         for fold in (0, 1)})
    return candidates, [moment for moment in candidates if _local_wall(moment) == wall]


def _first_instant(day: date) -> datetime:
    midnight = datetime.combine(day, time.min)
    candidates, exact = _wall_readings(midnight)
    if exact:
        return exact[0]
    # Midnight was skipped: the first second whose local date is `day`, between the two.
    low, high = candidates[0], candidates[-1]
    while _local_wall(low).date() >= day:
        low -= timedelta(hours=1)
    while _local_wall(high).date() < day:
        high += timedelta(hours=1)
    lo, hi = int(low.timestamp()), int(high.timestamp())  # local date: before `day` at lo, not at hi
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if datetime.fromtimestamp(mid).date() >= day:
            hi = mid
        else:
            lo = mid
    return datetime.fromtimestamp(hi, timezone.utc)


def has_legacy_history(review_count: int, last_reviewed: date | None) -> bool:
    """True when the previous tool already reviewed the note (so it is not new)."""
    return (review_count or 0) > 0 or last_reviewed is not None


def legacy_card(
    note_key: int,
    *,
    review_count: int,
    last_reviewed: date | None,
    next_review: date | None,
    difficulty_label: str | None,
    scheduler: Scheduler,
    today: date,
) -> CardRow:
    """Migrate the previous tool's history: its current interval becomes the starting
    stability, its due date is kept, and the card enters the Review state.

    The interval is next_review - last_reviewed; with one of them missing it is read off the
    tool's ladder for the note's difficulty at the review count (as the tool computed it).
    The author's difficulty label seeds FSRS difficulty (easy/medium/hard as a first rating of
    easy/good/hard would).
    """
    label = (difficulty_label or "medium").lower()
    ladder = LEGACY_LADDERS.get(label, LEGACY_LADDERS["medium"])
    ladder_days = ladder[min(max(review_count - 1, 0), len(ladder) - 1)]
    if last_reviewed and next_review and next_review > last_reviewed:
        interval = (next_review - last_reviewed).days
    else:
        interval = ladder_days
    if last_reviewed is None:
        last_reviewed = (next_review or today) - timedelta(days=interval)
    due_day = next_review or last_reviewed + timedelta(days=interval)
    seed = _LABEL_RATING.get(label, Rating.Good)
    # positional, in CardRow's order: note_key, state, step, stability, difficulty, due,
    # last_review, suspended, reps, lapses, legacy (a load derives thousands)
    return CardRow(note_key, _REVIEW, None, float(max(interval, 1)), _initial_difficulty(scheduler, seed),
                   start_of_day(due_day), start_of_day(last_reviewed), False, review_count, 0, True)


_REVIEW = int(State.Review)
_INITIAL_DIFFICULTY: dict[tuple, float] = {}
_LAST_DIFFICULTIES: list = [None, None, {}]
"""[the scheduler last asked about, its parameters then, {seed: difficulty}]: a load asks
thousands of times about one scheduler, and hashing its 21 parameters each time cost a tenth of
deriving a legacy card."""


def _initial_difficulty(scheduler: Scheduler, seed: Rating) -> float:
    """FSRS's first difficulty for a rating; remembered per parameter set (a vault migrates
    thousands of legacy notes per load with the same few values)."""
    last, parameters, values = _LAST_DIFFICULTIES
    if last is scheduler and scheduler.parameters is parameters and seed in values:
        return values[seed]
    key = (scheduler.parameters, seed)
    value = _INITIAL_DIFFICULTY.get(key)
    if value is None:
        value = _INITIAL_DIFFICULTY[key] = scheduler._initial_difficulty(rating=seed, clamp=True)
    if last is not scheduler or scheduler.parameters is not parameters:
        _LAST_DIFFICULTIES[:] = [scheduler, scheduler.parameters, {}]
    _LAST_DIFFICULTIES[2][seed] = value
    return value


def retrievability(scheduler: Scheduler, row: CardRow, now: datetime) -> float:
    """Predicted probability of recall now (0 for a note never reviewed).

    The same expression as `Scheduler.get_card_retrievability` (fsrs 6), without building an
    `fsrs.Card` for every note; `tests/test_schedule_fast.py` checks they agree.
    """
    if row.last_review is None or row.stability is None:
        return 0.0
    if now.tzinfo is None:
        now = now.astimezone()  # a naive instant means local time
    elapsed_days = max(0, (now - row.last_review).days)
    return float((1 + scheduler._FACTOR * elapsed_days / row.stability) ** scheduler._DECAY)


def review(scheduler: Scheduler, row: CardRow, rating: Rating, now: datetime,
           duration_ms: int | None = None,
           offsets: tuple[int, int | None] | None = None) -> CardRow:
    """The card after reviewing it with `rating` at `now`.

    An interval of whole days is days on the reviewer's calendar (`calendar_due`): in this
    machine's zone, or, with `offsets`, in the reviewer's UTC offsets a review event recorded
    (a replay that runs FSRS again gives every device the instant the reviewer's got)."""
    moment = now.astimezone(timezone.utc)
    card, _ = scheduler.review_card(to_fsrs(row), rating, moment, duration_ms)
    if rating == Rating.Easy:
        card.due = max(card.due, _easy_floor(_steady(scheduler), row, moment))
    card.due = calendar_due(moment, card.due, offsets)
    return updated_row(row, card, rating)


_DAY = timedelta(days=1)


def calendar_due(moment: datetime, due: datetime,
                 offsets: tuple[int, int | None] | None = None) -> datetime:
    """`due`, FSRS's `moment` + N x 24 h, moved to the same local time of day N calendar days
    after `moment`: what a learner means by "in N days" (Anki counts days so too).

    FSRS adds whole days in UTC, so across a change of the clocks its due lands an hour off
    the time of day of the review, and near midnight on another day: 24 h after Saturday 23:30
    EST is Monday 00:30 EDT, 24 h after 00:30 EDT on the day the clocks go back is 23:30 EST
    that same day; the note's `next_review` then said Monday, or the day just reviewed.
    Intervals that are not whole days (learning steps in minutes) are left as FSRS gave them.

    `offsets`: (the reviewer's UTC offset at `moment`, at the due instant), seconds, as a
    review event records them (`utc_offset`, `due_utc_offset`; the second None where not
    known): the same answer on every device. Else this machine's zone, as a new review has it:
    a local time that comes twice is the first; one the clocks skip is read in the offset
    before the jump, so it lands just after it, on its day (00:30 where midnight is skipped is
    01:30 by the new clock; Python reads it in the offset after, 23:30 the day before)."""
    span = due - moment
    if span < _DAY or span % _DAY:
        return due
    if offsets is not None:
        offset, due_offset = offsets
        return due + timedelta(seconds=offset - (offset if due_offset is None else due_offset))
    if _time.localtime(moment.timestamp()).tm_gmtoff == _time.localtime(due.timestamp()).tm_gmtoff:
        return due  # no change of the clocks between: FSRS's due is that local time already
    candidates, exact = _wall_readings(_local_wall(moment) + span)
    return exact[0] if exact else candidates[-1]


def preview(scheduler: Scheduler, row: CardRow, now: datetime) -> dict[str, timedelta]:
    """Time until the note is due again for each rating (unfuzzed: what the buttons show)."""
    steady = _steady(scheduler)
    moment = now.astimezone(timezone.utc)
    result = {}
    for name, rating in RATINGS.items():
        card, _ = steady.review_card(to_fsrs(row), rating, moment)
        result[name] = card.due - moment
    result["easy"] = max(result["easy"], _easy_floor(steady, row, moment) - moment)
    return result


def _steady(scheduler: Scheduler) -> Scheduler:
    """The same scheduler without fuzzing: the intervals the buttons promise."""
    if not scheduler.enable_fuzzing:
        return scheduler
    return Scheduler(parameters=scheduler.parameters,
                     desired_retention=scheduler.desired_retention,
                     learning_steps=scheduler.learning_steps,
                     relearning_steps=scheduler.relearning_steps,
                     maximum_interval=scheduler.maximum_interval, enable_fuzzing=False)


def _easy_floor(steady: Scheduler, row: CardRow, moment: datetime) -> datetime:
    """The earliest due date Easy may give: a day past Good's when Good schedules in days.

    fsrs orders the ratings by stability only, so a learning step that graduates (or a card
    with a short stability) gets the same whole-day interval from Good and Easy; Anki keeps
    Easy at least one day longer than Good, and so do we (stability stays as FSRS set it).
    """
    good, _ = steady.review_card(to_fsrs(row), Rating.Good, moment)
    good_span = good.due - moment
    if good_span < timedelta(days=1):
        return moment  # Good is a learning step: Easy already graduates past it
    days = min(round(good_span / timedelta(days=1)) + 1, steady.maximum_interval)
    return moment + timedelta(days=days)


def format_interval(span: timedelta) -> str:
    """Short human form for buttons and the CLI: 10m, 3h, 4d, 2.5mo, 1.2y."""
    minutes = span.total_seconds() / 60
    if minutes < 60:
        return f"{max(round(minutes), 1)}m"
    if minutes < 60 * 24:
        return f"{round(minutes / 60)}h"
    days = minutes / (60 * 24)
    if days < 30:
        return f"{round(days)}d"
    if days < 365:
        return f"{days / 30:.1f}mo"
    return f"{days / 365:.1f}y"


def interval_labels(spans: dict[str, timedelta]) -> dict[str, str]:
    """`format_interval` of each rating's span, in whole days where two different spans would
    otherwise read the same (33 and 34 days are both "1.1mo")."""
    short = {name: format_interval(span) for name, span in spans.items()}
    labels = dict(short)
    for name, span in spans.items():
        clash = any(short[other] == short[name] and spans[other] != span for other in spans)
        if clash and span >= timedelta(days=1):
            labels[name] = f"{round(span / timedelta(days=1))}d"
    return labels
