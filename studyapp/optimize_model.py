"""FSRS-6's memory model as batched torch ops, so parameters can be fitted to convergence.

It computes exactly what `fsrs.Scheduler` (6.3.2) computes when it replays a card: initial
stability and difficulty from the first rating; then at each review the retrievability over
*whole* elapsed days (`timedelta.days`, as `get_card_retrievability` does), the short-term
stability update when less than a day has passed (FSRS-6's same-day reviews), otherwise the
recall / forget stability, then the new difficulty. Learning states do not change these
numbers, so one pass over all cards at once replaces the per-review Python replay of
`fsrs.optimizer.Optimizer` (seconds per pass) with a few milliseconds per review position.
`tests/test_optimize.py` checks it against the Scheduler review by review.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import torch
from fsrs import ReviewLog
from fsrs.scheduler import LOWER_BOUNDS_PARAMETERS, UPPER_BOUNDS_PARAMETERS


@dataclass
class CardHistories:
    """Every card's reviews as (position, card) tensors, padded to the longest history."""

    ratings: torch.Tensor
    elapsed_days: torch.Tensor
    """Whole days since the card's previous review (0 at the first review)."""
    present: torch.Tensor

    @classmethod
    def from_logs(cls, logs: Sequence[ReviewLog]) -> CardHistories:
        by_card: dict[int, list[ReviewLog]] = {}
        for log in sorted(logs, key=lambda r: r.review_datetime):
            by_card.setdefault(log.card_id, []).append(log)
        length = max(len(h) for h in by_card.values())
        shape = (length, len(by_card))
        ratings = torch.ones(shape, dtype=torch.float64)
        elapsed = torch.zeros(shape, dtype=torch.float64)
        present = torch.zeros(shape, dtype=torch.bool)
        for card, history in enumerate(by_card.values()):
            for i, log in enumerate(history):
                ratings[i, card] = int(log.rating)
                present[i, card] = True
                if i:
                    elapsed[i, card] = (log.review_datetime - history[i - 1].review_datetime).days
        return cls(ratings, elapsed, present)

    @property
    def scored(self) -> torch.Tensor:
        """Reviews the loss counts: a whole day or more after the card's previous review."""
        scored = self.present & (self.elapsed_days >= 1)
        scored[0] = False
        return scored


def predicted_recall(w: torch.Tensor, h: CardHistories) -> torch.Tensor:
    """Retrievability the Scheduler predicts just before each review (0 before the first)."""
    decay = -w[20]
    factor = 0.9 ** (1 / decay) - 1
    first = h.ratings[0]
    stability = w[:4][first.long() - 1].clamp(min=0.001)
    difficulty = (w[4] - torch.exp(w[5] * (first - 1)) + 1).clamp(1, 10)
    easy_initial_difficulty = w[4] - torch.exp(w[5] * 3) + 1
    one = torch.ones_like(stability)
    predictions = [torch.zeros_like(stability)]
    for i in range(1, h.ratings.shape[0]):
        rating, elapsed = h.ratings[i], h.elapsed_days[i]
        recall = (1 + factor * elapsed / stability) ** decay
        predictions.append(recall)
        short_term = torch.exp(w[17] * (rating - 3 + w[18])) * stability ** -w[19]
        short_term = torch.where(rating >= 2, short_term.clamp(min=1.0), short_term)
        recalled = stability * (
            1 + torch.exp(w[8]) * (11 - difficulty) * stability ** -w[9]
            * (torch.exp((1 - recall) * w[10]) - 1)
            * torch.where(rating == 2, w[15], one) * torch.where(rating == 4, w[16], one))
        forgotten = torch.minimum(
            w[11] * difficulty ** -w[12] * ((stability + 1) ** w[13] - 1)
            * torch.exp((1 - recall) * w[14]),
            stability / torch.exp(w[17] * w[18]))
        long_term = torch.where(rating == 1, forgotten, recalled)
        new_stability = torch.where(elapsed < 1, stability * short_term, long_term)
        new_stability = new_stability.clamp(min=0.001)
        damped = difficulty + (10 - difficulty) * (-w[6] * (rating - 3)) / 9
        new_difficulty = (w[7] * easy_initial_difficulty + (1 - w[7]) * damped).clamp(1, 10)
        stability = torch.where(h.present[i], new_stability, stability)
        difficulty = torch.where(h.present[i], new_difficulty, difficulty)
    return torch.stack(predictions)


def log_loss(w: torch.Tensor, h: CardHistories) -> torch.Tensor:
    """Mean binary cross-entropy over the scored reviews (recalled = any rating but Again)."""
    scored = h.scored
    recalled = (h.ratings != 1).to(torch.float64)
    return torch.nn.functional.binary_cross_entropy(predicted_recall(w, h)[scored],
                                                    recalled[scored])


def fit(h: CardHistories, start: Sequence[float], steps: int, learning_rate: float = 0.04
        ) -> list[float]:
    """Full-batch Adam with cosine-annealed steps, parameters clipped to the fsrs bounds."""
    lower = torch.tensor(LOWER_BOUNDS_PARAMETERS, dtype=torch.float64)
    upper = torch.tensor(UPPER_BOUNDS_PARAMETERS, dtype=torch.float64)
    w = torch.tensor(list(start), dtype=torch.float64).clamp(lower, upper).requires_grad_(True)
    adam = torch.optim.Adam([w], lr=learning_rate)
    schedule = torch.optim.lr_scheduler.CosineAnnealingLR(adam, T_max=steps)
    for _ in range(steps):
        adam.zero_grad()
        log_loss(w, h).backward()
        adam.step()
        schedule.step()
        with torch.no_grad():
            w.clamp_(lower, upper)
    return [float(x) for x in w.detach()]
