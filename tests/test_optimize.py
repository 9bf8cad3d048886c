"""Fitting FSRS parameters with fsrs-rs: it helps on unseen reviews, never hurts, and skips torch."""

from __future__ import annotations

import math
import os
import random
import subprocess
import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from fsrs import Card, Rating, ReviewLog, Scheduler
from fsrs.scheduler import DEFAULT_PARAMETERS

from studyapp.optimize import fit_parameters, training_items

ROOT = Path(__file__).resolve().parent.parent


def _env() -> dict:
    return dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH")) if p))


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


def _scheduler_log_loss(parameters, logs) -> float:
    """Log loss of the app's own fsrs Scheduler replaying `logs`, on reviews a day or more apart."""
    scheduler = Scheduler(parameters=parameters, enable_fuzzing=False)
    cards: dict[int, Card] = {}
    losses = []
    for log in sorted(logs, key=lambda r: r.review_datetime):
        card = cards.get(log.card_id) or Card(card_id=log.card_id, due=log.review_datetime)
        if card.last_review and (log.review_datetime - card.last_review).days > 0:
            p = min(max(scheduler.get_card_retrievability(card, log.review_datetime), 1e-6), 1 - 1e-6)
            losses.append(-math.log(p if log.rating != Rating.Again else 1 - p))
        cards[log.card_id], _ = scheduler.review_card(card, log.rating, log.review_datetime)
    return sum(losses) / len(losses)


def test_fitting_beats_defaults_on_reviews_it_did_not_see():
    train = _simulated_log(FORGETFUL, cards=300, reviews=10, seed=1)
    held_out = _simulated_log(FORGETFUL, cards=300, reviews=10, seed=2)
    fit = fit_parameters(train)
    assert fit.review_count >= 512
    assert fit.log_loss_after < fit.log_loss_before - 0.02
    assert len(fit.parameters) == len(DEFAULT_PARAMETERS)
    default_loss = _scheduler_log_loss(DEFAULT_PARAMETERS, held_out)
    fitted_loss = _scheduler_log_loss(fit.parameters, held_out)
    assert fitted_loss < default_loss - 0.01


def test_fitting_never_returns_worse_parameters_than_those_in_use(monkeypatch):
    """An optimizer result that predicts the log worse than the parameters in use is dropped."""
    import fsrs_rs_python

    real = fsrs_rs_python.FSRS

    class DefaultsOnly:
        def __init__(self, parameters):
            self._inner = real(parameters)

        def compute_parameters(self, items):
            return list(DEFAULT_PARAMETERS)  # worse than the truth on a forgetful learner's log

        def evaluate(self, items):
            return self._inner.evaluate(items)

    monkeypatch.setattr(fsrs_rs_python, "FSRS", DefaultsOnly)
    logs = _simulated_log(FORGETFUL, cards=120, reviews=8, seed=1)
    fit = fit_parameters(logs, current=FORGETFUL)
    assert fit.parameters == pytest.approx(FORGETFUL)
    assert fit.log_loss_after == fit.log_loss_before


def test_training_items_count_calendar_days():
    """Same-day reviews stay in a card's history but are not scored; the next date is a day later."""
    start = datetime(2026, 3, 2, 9, 0).astimezone()  # local time: the day boundary is the user's
    logs = [ReviewLog(7, Rating.Good, start + timedelta(minutes=m), None) for m in (0, 10)]
    logs += [ReviewLog(7, Rating.Good, start.replace(hour=h) + timedelta(days=d), None)
             for d, h in ((0, 23), (1, 1), (3, 20))]
    items = training_items(logs)
    assert len(items) == 2  # the review on the next date (2 h later) and the one two dates on
    # fsrs-rs exposes reviews only through their repr
    assert [repr(r) for r in items[-1].reviews] == [
        f"FSRSReview {{ rating: 3, delta_t: {days} }}" for days in (0, 0, 0, 1, 2)]


def _store_with_history(tmp_path) -> list[str]:
    """A data dir whose history is a simulated forgetful learner's log; returns the CLI's options."""
    from studyapp.store import Store, utc_text

    (tmp_path / "vault").mkdir()
    logs = _simulated_log(FORGETFUL, cards=120, reviews=8, seed=1)
    with Store(tmp_path / "data" / "studyapp.sqlite3") as store:
        keys: dict[int, int] = {}
        for log in logs:
            if log.card_id not in keys:
                keys[log.card_id] = store.add_note(f"n{log.card_id}.md", None, None, T0)
            store.insert_review({
                "note_key": keys[log.card_id], "rating": int(log.rating),
                "reviewed_at": utc_text(log.review_datetime), "state_after": 2,
                "due_after": utc_text(log.review_datetime), "scheduled_days": 1, "path": "x.md"})
    # the simulated reviews run for decades: fit after the last (never before one, `refuse_fit_before`)
    after = max(log.review_datetime for log in logs) + timedelta(days=1)
    return ["--vault", str(tmp_path / "vault"), "--data-dir", str(tmp_path / "data"),
            "--now", after.isoformat()]


def test_optimize_command_fits_the_users_log_and_stores_the_parameters(tmp_path, capsys):
    from studyapp.cli import main
    from studyapp.store import Store

    assert main(["optimize", *_store_with_history(tmp_path)]) == 0
    before, after = (float(x) for x in capsys.readouterr().out.split("reviews: ")[1]
                     .replace(" before,", "").split()[:2])
    assert after < before - 0.02
    with Store(tmp_path / "data" / "studyapp.sqlite3") as store:
        assert store.latest_params() != pytest.approx(DEFAULT_PARAMETERS)


def test_optimize_never_imports_torch_in_the_cli_process(tmp_path):
    code = ("import sys\n"
            "from studyapp.cli import main\n"
            "code = main(['optimize', *sys.argv[1:]])\n"
            "print(code, 'torch' in sys.modules)\n")
    out = subprocess.run([sys.executable, "-c", code, *_store_with_history(tmp_path)],
                         capture_output=True, text=True, check=True, env=_env())
    assert out.stdout.strip().splitlines()[-1] == "0 False"


def test_without_the_optimizer_extra_optimize_says_how_to_install_it_in_one_line(tmp_path):
    """fsrs-rs-python is the `optimizer` extra: a missing one is one line and exit 1, no traceback."""
    code = ("import sys\n"
            "sys.modules['fsrs_rs_python'] = None  # as if not installed: importing it raises\n"
            "from studyapp.cli import main\n"
            "sys.exit(main(['optimize', *sys.argv[1:]]))\n")
    out = subprocess.run([sys.executable, "-c", code, *_store_with_history(tmp_path)],
                         capture_output=True, text=True, env=_env())
    assert out.returncode == 1, out.stderr
    assert "Traceback" not in out.stderr
    said = [line for line in out.stderr.splitlines() if not line.startswith("studyapp: note:")]  # first use
    assert said == [
        "studyapp: error: `studyapp optimize` needs the FSRS optimizer (fsrs-rs-python), which is not "
        "installed: pip install 'studyapp[optimizer]'"]


def test_the_optimizer_is_an_extra_that_make_installs():
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    pyproject = (root / "pyproject.toml").read_text(encoding="utf-8")
    dependencies = pyproject.split("dependencies = [", 1)[1].split("]", 1)[0]
    assert "fsrs-rs-python" not in dependencies
    assert 'optimizer = ["fsrs-rs-python' in pyproject
    assert '".[test,optimizer]"' in (root / "Makefile").read_text(encoding="utf-8")
