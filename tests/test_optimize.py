"""Fitting FSRS parameters: the batched model matches the fsrs Scheduler, and fitting helps."""

from __future__ import annotations

import random
from datetime import datetime, timedelta, timezone

import pytest
import torch
from fsrs import Card, Rating, ReviewLog, Scheduler
from fsrs.scheduler import DEFAULT_PARAMETERS

from studyapp.optimize_model import CardHistories, log_loss, predicted_recall
from studyapp.optimize import fit_parameters

T0 = datetime(2026, 1, 1, 8, tzinfo=timezone.utc)
# A learner who forgets much faster than FSRS's defaults assume.
FORGETFUL = (0.05, 0.3, 0.8, 3.0, 7.5, 0.6, 2.0, 0.01, 0.7, 0.2, 0.8, 2.0, 0.06, 0.3, 1.6,
             0.6, 1.9, 0.5, 0.1, 0.07, 0.3)


def _simulated_log(parameters, cards: int, reviews: int, seed: int) -> list[ReviewLog]:
    """Reviews when FSRS's defaults schedule them, recalled as the true model predicts."""
    rng = random.Random(seed)
    truth = Scheduler(parameters=parameters, enable_fuzzing=False)
    default = Scheduler(enable_fuzzing=False)
    logs = []
    for card_id in range(cards):
        now = T0 + timedelta(hours=rng.uniform(0, 48))
        true_card = scheduled = Card(card_id=card_id, due=now)
        for _ in range(reviews):
            recalled = rng.random() < (truth.get_card_retrievability(true_card, now)
                                       if true_card.last_review else 0.6)
            rating = rng.choice((Rating.Hard, Rating.Good, Rating.Good, Rating.Easy)) \
                if recalled else Rating.Again
            logs.append(ReviewLog(card_id, rating, now, None))
            true_card, _ = truth.review_card(true_card, rating, now)
            scheduled, _ = default.review_card(scheduled, rating, now)
            now = scheduled.due + timedelta(hours=rng.uniform(-10, 30))
    return logs


def test_batched_model_predicts_what_the_scheduler_predicts():
    """Same-day, next-day-under-24h and long gaps, all four ratings, non-default parameters."""
    rng = random.Random(3)
    logs = []
    for card_id in range(40):
        now = T0 + timedelta(minutes=rng.randrange(600))
        for _ in range(rng.randrange(1, 12)):
            logs.append(ReviewLog(card_id, Rating(rng.randrange(1, 5)), now, None))
            now += timedelta(minutes=rng.choice((1, 10, 20 * 60, 30 * 60, 3 * 1440, 20 * 1440)))
    for parameters in (DEFAULT_PARAMETERS, FORGETFUL):
        scheduler = Scheduler(parameters=parameters, enable_fuzzing=False)
        expected: dict[int, list[float]] = {}
        cards: dict[int, Card] = {}
        for log in sorted(logs, key=lambda r: r.review_datetime):
            card = cards.get(log.card_id) or Card(card_id=log.card_id, due=log.review_datetime)
            expected.setdefault(log.card_id, []).append(
                scheduler.get_card_retrievability(card, log.review_datetime))
            cards[log.card_id], _ = scheduler.review_card(card, log.rating, log.review_datetime)
        histories = CardHistories.from_logs(logs)
        with torch.no_grad():
            got = predicted_recall(torch.tensor(parameters, dtype=torch.float64), histories)
        for column, card_id in enumerate(expected):  # cards in order of first review
            want = expected[card_id]
            assert got[:len(want), column].tolist() == pytest.approx(want, rel=1e-9, abs=1e-12)


def test_fitting_beats_defaults_on_reviews_it_did_not_see():
    train = _simulated_log(FORGETFUL, cards=120, reviews=8, seed=1)
    held_out = _simulated_log(FORGETFUL, cards=120, reviews=8, seed=2)
    fit = fit_parameters(train, steps=80)
    assert fit.review_count >= 512
    assert fit.log_loss_after < fit.log_loss_before - 0.02
    unseen = CardHistories.from_logs(held_out)
    with torch.no_grad():
        default_loss = log_loss(torch.tensor(DEFAULT_PARAMETERS, dtype=torch.float64), unseen)
        fitted_loss = log_loss(torch.tensor(fit.parameters, dtype=torch.float64), unseen)
    assert fitted_loss < default_loss - 0.01


def test_fitting_never_returns_worse_parameters_than_those_in_use():
    logs = _simulated_log(FORGETFUL, cards=120, reviews=8, seed=1)
    fit = fit_parameters(logs, current=FORGETFUL, steps=0)  # no steps: the defaults, worse
    assert fit.parameters == pytest.approx(FORGETFUL)
    assert fit.log_loss_after == fit.log_loss_before


def test_optimize_command_fits_the_users_log_and_stores_the_parameters(tmp_path, capsys):
    from studyapp.cli import main
    from studyapp.store import Store, utc_text

    (tmp_path / "vault").mkdir()
    with Store(tmp_path / "data" / "studyapp.sqlite3") as store:
        keys: dict[int, int] = {}
        for log in _simulated_log(FORGETFUL, cards=120, reviews=8, seed=1):
            if log.card_id not in keys:
                keys[log.card_id] = store.add_note(f"n{log.card_id}.md", None, None, T0)
            store.insert_review({
                "note_key": keys[log.card_id], "rating": int(log.rating),
                "reviewed_at": utc_text(log.review_datetime), "state_after": 2,
                "due_after": utc_text(log.review_datetime), "scheduled_days": 1, "path": "x.md"})
    common = ["--vault", str(tmp_path / "vault"), "--data-dir", str(tmp_path / "data")]
    assert main(["optimize", *common]) == 0
    before, after = (float(x) for x in capsys.readouterr().out.split("reviews: ")[1]
                     .replace(" before,", "").split()[:2])
    assert after < before - 0.02
    with Store(tmp_path / "data" / "studyapp.sqlite3") as store:
        assert store.latest_params() != pytest.approx(DEFAULT_PARAMETERS)
