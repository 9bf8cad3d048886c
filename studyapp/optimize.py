"""Fit FSRS parameters to a review log with the FSRS project's own optimizer (fsrs-rs).

`fit_parameters` is the one code path: `studyapp optimize` uses it on the user's log and
`benchmarks/scheduler_quality.py` on a training split. The fitting itself is `fsrs-rs-python`
(the Rust optimizer Anki uses), so no torch and no model of our own (a test runs `studyapp
optimize` and checks that torch never loads): we only turn review logs into its items and keep
the result when it predicts the log better than the parameters in use. fsrs-rs-python is the
`optimizer` extra (`pip install 'studyapp[optimizer]'`, as py-fsrs ships its own optimizer);
without it, `fsrs_rs` says so in one line.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from types import ModuleType
from typing import TypeVar

from fsrs import Rating, ReviewLog
from fsrs.scheduler import DEFAULT_PARAMETERS

from studyapp.errors import UserError
from studyapp.schedule import unusable_parameters

OPTIMIZER_EXTRA = "optimizer"
"""The extra that installs fsrs-rs-python (pyproject.toml)."""

MIN_REVIEWS = 512
"""Reviews a day or more after the card's previous one needed before fitting 21 parameters
(the fsrs optimizers' own threshold, one mini-batch): fewer would mostly fit noise."""


class NotEnoughHistory(ValueError):
    """Too few reviews to fit parameters; the message says how many are needed."""


@dataclass(frozen=True)
class FitResult:
    """What one fit produced, and how well old and new parameters predict the same log."""

    parameters: list[float]
    log_loss_before: float
    """Log loss of the parameters in use before fitting, on the same reviews."""
    log_loss_after: float
    """Log loss of `parameters` (never above `log_loss_before`)."""
    review_count: int
    """Reviews that count towards the loss (a day or more after the previous one)."""


class OptimizerMissing(UserError):
    """fsrs-rs-python is not installed: the optional dependency, not a bug."""


class OptimizerFailed(UserError):
    """fsrs-rs raised, or gave back something FSRS cannot use: the parameters in use are kept,
    nothing is stored or logged (one line, exit 1)."""


_T = TypeVar("_T")


def _optimizer(what: str, call: Callable[[], _T]) -> _T:
    """`call()` into fsrs-rs, its failures as OptimizerFailed. It reports bad input with a
    ValueError (`InvalidInput`, `NotEnoughData`), which the CLI would take for a usage error,
    and a Rust panic arrives as pyo3's PanicException, a BaseException."""
    try:
        return call()
    except (KeyboardInterrupt, SystemExit, GeneratorExit):
        raise
    except BaseException as exc:  # noqa: BLE001 - a native library's every failure is one line
        said = str(exc) or type(exc).__name__
        raise OptimizerFailed(f"the FSRS optimizer (fsrs-rs) failed while {what}: {said}; "
                              "the parameters in use are kept") from None


def _checked_fit(fit: FitResult) -> FitResult:
    """`fit` when every number of it can be kept (and logged: the log holds no NaN), else
    OptimizerFailed saying what is wrong."""
    why = unusable_parameters(fit.parameters)
    if why is None:
        for name, loss in (("the log loss of the parameters in use", fit.log_loss_before),
                           ("the log loss of the fitted parameters", fit.log_loss_after)):
            if type(loss) not in (int, float) or not math.isfinite(loss):
                why = f"{name} is {loss!r}"
                break
    if why is not None:
        raise OptimizerFailed(f"the FSRS optimizer (fsrs-rs) gave back a fit FSRS cannot use "
                              f"({why}): not kept; the parameters in use stay")
    return fit


def fsrs_rs(needed_by: str = "`studyapp optimize`") -> ModuleType:
    """The fsrs-rs bindings, or OptimizerMissing naming what needs them and how to install them."""
    try:
        import fsrs_rs_python
    except ImportError:
        raise OptimizerMissing(
            f"{needed_by} needs the FSRS optimizer (fsrs-rs-python), which is not installed: "
            f"pip install 'studyapp[{OPTIMIZER_EXTRA}]'") from None
    return fsrs_rs_python


def _elapsed_days(previous: datetime, current: datetime) -> int:
    """Calendar days between two reviews in local time, as Anki and fsrs-rs count them.

    Counting whole 24-hour periods instead (what `fsrs.Scheduler` does for retrievability)
    fitted worse on the benchmark's real log: 0.4361 log loss on the held-out part against
    0.4263 with calendar days (defaults: 0.4313).
    """
    return (current.astimezone().date() - previous.astimezone().date()).days


def countable_reviews(logs: Sequence[ReviewLog]) -> int:
    """Reviews the optimizer learns from: a day or more after the card's previous review."""
    last: dict[int, datetime] = {}
    count = 0
    for log in sorted(logs, key=lambda r: (r.card_id, r.review_datetime)):
        previous = last.get(log.card_id)
        if previous is not None and _elapsed_days(previous, log.review_datetime) > 0:
            count += 1
        last[log.card_id] = log.review_datetime
    return count


def training_items(logs: Sequence[ReviewLog]) -> list:
    """One fsrs-rs item per scored review: the card's history up to and including it."""
    rs = fsrs_rs()

    by_card: dict[int, list[ReviewLog]] = {}
    for log in sorted(logs, key=lambda r: r.review_datetime):
        by_card.setdefault(log.card_id, []).append(log)
    items = []
    for history in by_card.values():
        reviews = []
        for i, log in enumerate(history):
            elapsed = _elapsed_days(history[i - 1].review_datetime, log.review_datetime) if i else 0
            reviews.append(rs.FSRSReview(int(log.rating), elapsed))
            if i and elapsed > 0:
                items.append(rs.FSRSItem(list(reviews)))
    return items


def fit_parameters(logs: Sequence[ReviewLog],
                   current: Sequence[float] | None = None) -> FitResult:
    """Fit parameters to `logs`; keep `current` (default FSRS parameters) when they predict better."""
    rs = fsrs_rs()
    usable = countable_reviews(logs)
    if usable < MIN_REVIEWS:
        raise NotEnoughHistory(
            f"optimizing needs at least {MIN_REVIEWS} reviews made a day or more after the "
            f"note's previous review; the log has {usable}. Keep reviewing and try again later."
        )
    items = training_items(logs)
    before = [float(p) for p in (current or DEFAULT_PARAMETERS)]
    fitted = _optimizer("fitting", lambda: [float(p) for p in
                                            rs.FSRS(before).compute_parameters(items)])
    why = unusable_parameters(fitted)
    if why is not None:  # checked before evaluating: fsrs-rs refuses some, accepts others
        raise OptimizerFailed(f"the FSRS optimizer (fsrs-rs) gave back parameters FSRS cannot "
                              f"use ({why}): not kept; the parameters in use stay")
    loss_before = _optimizer("evaluating the parameters in use",
                             lambda: float(rs.FSRS(before).evaluate(items).log_loss))
    loss_after = _optimizer("evaluating the fitted parameters",
                            lambda: float(rs.FSRS(fitted).evaluate(items).log_loss))
    if loss_after > loss_before:  # never replace parameters with worse ones
        fitted, loss_after = before, loss_before
    # a NaN loss compares False both ways, so it decided nothing: refused here
    return _checked_fit(FitResult(fitted, loss_before, loss_after, usable))


def refuse_fit_before(review_times: Sequence[datetime], now: datetime) -> None:
    """UserError when a review was made after `now`. A fit is logged at `now`, and every replay
    (`sync --full`, another device, a rebuilt database) schedules each later review with it,
    while this cache scheduled them with the parameters before: as a review cannot be recorded
    before the previous one (`rate`), parameters cannot be fitted before a review either."""
    latest = max(review_times, default=None)
    if latest is not None and latest > now:
        raise UserError(
            f"the review log holds reviews up to {latest.astimezone().isoformat(timespec='minutes')}, "
            f"after the time given ({now.astimezone().isoformat(timespec='minutes')}); "
            "parameters cannot be fitted before reviews already made")


def logs_from_store(store) -> list[ReviewLog]:
    """The user's review log as fsrs ReviewLogs (one card per note key), without the notes whose
    first review here started from a card made elsewhere (the previous tool's review keys, an
    OSR import, a suspension's seed): fsrs-rs reads the first review of each history as a new
    card's first rating, and their first one came after a memory of unknown age. Anki leaves
    such cards out of training as well."""
    first_of: dict[int, bool] = {}
    logs = []
    for r in store.reviews():
        if first_of.setdefault(r.note_key, r.state_before is None):
            logs.append(ReviewLog(card_id=r.note_key, rating=Rating(r.rating),
                                  review_datetime=r.reviewed_at, review_duration=r.duration_ms))
    return logs


def keep_fit(ctx, store, fit: FitResult) -> None:
    """Keep a fit: appended to this device's log (which carries it to every device) and saved
    as the parameters in use, in one transaction."""
    from studyapp.history.events import EventKind, new_event
    from studyapp.history.sync import event_log, record

    _checked_fit(fit)  # a set FSRS cannot use stops every later command on every device
    events_log = event_log(ctx)
    with store.transaction():
        record(store, events_log, new_event(
            EventKind.PARAMS, ctx.now(), events_log.device, None,
            parameters=[float(p) for p in fit.parameters],
            log_loss_before=fit.log_loss_before, log_loss_after=fit.log_loss_after,
            review_count=fit.review_count))
        store.save_params(fit.parameters, ctx.now(), fit.log_loss_before,
                          fit.log_loss_after, fit.review_count)
