"""Fit FSRS parameters to a review log (imports torch when fitting: load lazily).

`fit_parameters` is the one code path: `studyapp optimize` uses it on the user's log and
`benchmarks/scheduler_quality.py` on a training split. It minimises the same loss as
`fsrs.optimizer.Optimizer` (log loss of the Scheduler's predicted recall at reviews a day or
more after the previous one, same-day reviews replayed through FSRS-6's short-term update),
but to convergence: that Optimizer takes one Adam step per 512 reviews for 5 epochs (35 steps
for 3,000 reviews), which leaves the fit far from its optimum and, measured on the benchmark's
held-out reviews, no better than the default parameters. See `studyapp/optimize_model.py`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from fsrs import Rating, ReviewLog
from fsrs.scheduler import DEFAULT_PARAMETERS

MIN_REVIEWS = 512
"""Reviews a day or more after the card's previous one needed before fitting 21 parameters
(the fsrs optimizer's own threshold, its mini-batch size): fewer would mostly fit noise."""

FIT_STEPS = 300
"""Full-batch Adam steps. On the benchmark's training part (3,232 scored reviews) the training
loss is 0.4432 after 35 steps (what the fsrs optimizer takes there), 0.4413 after 100 and 0.4405
after 300: converged; 300 steps over those 8,806 reviews took 79 s on a shared 2-core machine."""


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


def fit_parameters(logs: Sequence[ReviewLog], current: Sequence[float] | None = None,
                   steps: int = FIT_STEPS) -> FitResult:
    """Fit parameters to `logs`; loss is compared against `current` (default FSRS parameters)."""
    usable = countable_reviews(logs)
    if usable < MIN_REVIEWS:
        raise NotEnoughHistory(
            f"optimizing needs at least {MIN_REVIEWS} reviews made a day or more after the "
            f"note's previous review; the log has {usable}. Keep reviewing and try again later."
        )
    import torch  # only here: the CLI and the TUI never load it

    from studyapp.optimize_model import CardHistories, fit, log_loss

    histories = CardHistories.from_logs(logs)
    before = list(current or DEFAULT_PARAMETERS)
    fitted = fit(histories, DEFAULT_PARAMETERS, steps)
    with torch.no_grad():
        loss_before = float(log_loss(torch.tensor(before, dtype=torch.float64), histories))
        loss_after = float(log_loss(torch.tensor(fitted, dtype=torch.float64), histories))
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
