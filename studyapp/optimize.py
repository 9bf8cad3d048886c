"""Fit FSRS parameters to a review log with the `fsrs` optimizer (imports torch: load lazily).

`fit_parameters` is the one code path: `studyapp optimize` uses it on the user's log and
`benchmarks/scheduler_quality.py` on a training split.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from fsrs import Rating, ReviewLog
from fsrs.scheduler import DEFAULT_PARAMETERS

MIN_REVIEWS = 512
"""Reviews a day or more after the card's previous one that the fsrs optimizer needs before
it moves away from the defaults (its mini-batch size)."""


class NotEnoughHistory(ValueError):
    """Too few reviews to fit parameters; the message says how many are needed."""


@dataclass
class FitResult:
    parameters: list[float]
    log_loss_before: float
    """Log loss of the parameters in use before fitting, on the same reviews."""
    log_loss_after: float
    review_count: int
    """Reviews that count towards the loss (a day or more after the previous one)."""


def countable_reviews(logs: Sequence[ReviewLog]) -> int:
    """Reviews the optimizer learns from: a day or more after the card's previous review."""
    last: dict[int, datetime] = {}
    count = 0
    for log in sorted(logs, key=lambda r: (r.card_id, r.review_datetime)):
        previous = last.get(log.card_id)
        if previous is not None and (log.review_datetime - previous).days > 0:
            count += 1
        last[log.card_id] = log.review_datetime
    return count


def fit_parameters(logs: Sequence[ReviewLog],
                   current: Sequence[float] | None = None) -> FitResult:
    """Fit parameters to `logs`; loss is compared against `current` (default FSRS parameters)."""
    usable = countable_reviews(logs)
    if usable < MIN_REVIEWS:
        raise NotEnoughHistory(
            f"optimizing needs at least {MIN_REVIEWS} reviews made a day or more after the "
            f"note's previous review; the log has {usable}. Keep reviewing and try again later."
        )
    from fsrs.optimizer import Optimizer  # torch, pandas: only here

    optimizer = Optimizer(list(logs))
    before = list(current or DEFAULT_PARAMETERS)
    fitted = optimizer.compute_optimal_parameters()
    loss_before = optimizer._compute_batch_loss(parameters=before)
    loss_after = optimizer._compute_batch_loss(parameters=fitted)
    if loss_after > loss_before:  # never replace parameters with worse ones
        fitted, loss_after = before, loss_before
    return FitResult([float(p) for p in fitted], loss_before, loss_after, usable)


def logs_from_store(store) -> list[ReviewLog]:
    """The user's review log as fsrs ReviewLogs (one card per note key)."""
    return [
        ReviewLog(card_id=r["note_key"], rating=Rating(r["rating"]),
                  review_datetime=datetime.fromisoformat(r["reviewed_at"]),
                  review_duration=r["duration_ms"])
        for r in store.reviews()
    ]
