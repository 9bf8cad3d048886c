"""`studyapp optimize` attacked: what fsrs-rs hands back (NaN, infinity, values out of FSRS's
bounds, another version's count), fsrs-rs raising, and reviews of notes first studied with
another tool. A fit FSRS cannot use is refused in one line and never stored or logged, so every
later command still runs; the parameters in use are kept."""

from __future__ import annotations

import json
import math
import sqlite3
from datetime import timedelta
from pathlib import Path

import fsrs_rs_python
import pytest
from fsrs.scheduler import DEFAULT_PARAMETERS
from test_optimize import T0, _store_with_history

from studyapp.cli import main
from studyapp.store import Store, utc_text


def run(capsys, args: list[str]) -> tuple[int, str, str]:
    capsys.readouterr()
    code = main(args)
    out, err = capsys.readouterr()
    err = "\n".join(line for line in err.splitlines()
                    if not line.startswith(("studyapp: note:", "fitting FSRS", "wrote ")))
    assert "Traceback" not in out + err
    return code, out, err


def stored_params(tmp_path: Path) -> list:
    with sqlite3.connect(tmp_path / "data" / "studyapp.sqlite3") as conn:
        return conn.execute("SELECT parameters FROM params").fetchall()


def logged_params(tmp_path: Path) -> list:
    lines = [line for path in (tmp_path / "vault" / ".studyapp" / "log").glob("*.jsonl")
             for line in path.read_text().splitlines() if '"params"' in line]
    return lines


REAL = fsrs_rs_python.FSRS


def optimizer_returning(parameters):
    """An fsrs-rs whose fit returns `parameters` and rates them better than any other set."""
    class Stub:
        def __init__(self, current):
            self.current = list(current)

        def compute_parameters(self, items):
            return list(parameters)

        def evaluate(self, items):
            class Evaluation:
                log_loss = 0.1 if self.current == list(parameters) else 0.5
            return Evaluation()
    return Stub


BAD = {
    "nan": [math.nan] * len(DEFAULT_PARAMETERS),
    "infinity": [math.inf, *DEFAULT_PARAMETERS[1:]],
    "out of bounds": [500.0, *DEFAULT_PARAMETERS[1:]],
    "negative": [*DEFAULT_PARAMETERS[:7], -1.0, *DEFAULT_PARAMETERS[8:]],
    "19 (FSRS-5)": list(DEFAULT_PARAMETERS[:19]),
    "none": [],
}


@pytest.mark.parametrize("parameters", list(BAD.values()), ids=list(BAD))
def test_parameters_fsrs_cannot_use_are_refused_and_never_stored(tmp_path, capsys, monkeypatch, parameters):
    """They were stored and logged: every later command then stopped on FSRS's own error
    (`due`, `stats`, even `sync --full`), on this device and on every device the log reached."""
    options = _store_with_history(tmp_path)
    monkeypatch.setattr(fsrs_rs_python, "FSRS", optimizer_returning(parameters))
    code, out, err = run(capsys, ["optimize", *options])
    assert code == 1, (code, out, err)
    assert len(err.splitlines()) == 1 and err.startswith("studyapp: error:") and "fsrs-rs" in err, err
    assert stored_params(tmp_path) == [] and logged_params(tmp_path) == []
    monkeypatch.setattr(fsrs_rs_python, "FSRS", REAL)
    for command in (["stats", "--json"], ["sync", "--full"]):
        code, out, err = run(capsys, [*command, *options])
        assert code == 0, (command, err)


def test_a_fit_whose_loss_is_not_a_number_is_refused(tmp_path, capsys, monkeypatch):
    """A NaN log loss compares False both ways: the fit was kept whatever it was."""
    options = _store_with_history(tmp_path)

    class NanLoss:
        def __init__(self, current):
            self.inner = REAL(current)

        def compute_parameters(self, items):
            return list(DEFAULT_PARAMETERS[:4]) + [7.0] + list(DEFAULT_PARAMETERS[5:])

        def evaluate(self, items):
            class Evaluation:
                log_loss = math.nan
            return Evaluation()

    monkeypatch.setattr(fsrs_rs_python, "FSRS", NanLoss)
    code, out, err = run(capsys, ["optimize", *options])
    assert code == 1 and "fsrs-rs" in err and len(err.splitlines()) == 1, (code, out, err)
    assert stored_params(tmp_path) == [] and logged_params(tmp_path) == []


@pytest.mark.parametrize("error", [ValueError("InvalidInput"), ValueError("NotEnoughData"),
                                   RuntimeError("thread panicked")],
                         ids=["invalid input", "not enough data", "runtime error"])
def test_fsrs_rs_raising_is_one_line_and_keeps_the_parameters(tmp_path, capsys, monkeypatch, error):
    """fsrs-rs says InvalidInput or NotEnoughData with a ValueError, which the CLI took for a
    usage error (exit 2, `studyapp: error: InvalidInput`); anything else was a crash (exit 70)."""
    options = _store_with_history(tmp_path)

    class Raising:
        def __init__(self, current):
            pass

        def compute_parameters(self, items):
            raise error

        def evaluate(self, items):
            raise error

    monkeypatch.setattr(fsrs_rs_python, "FSRS", Raising)
    code, out, err = run(capsys, ["optimize", *options])
    assert code == 1, (code, out, err)
    assert len(err.splitlines()) == 1 and "fsrs-rs" in err and str(error) in err, err
    assert "internal error" not in err
    assert stored_params(tmp_path) == [] and logged_params(tmp_path) == []


def test_reviews_of_notes_first_studied_elsewhere_do_not_train(tmp_path):
    """A note the previous tool (or OSR, or a suspension's seed) had already scheduled starts
    from a card of its own: its first review here is no first rating of a new card, though
    fsrs-rs reads the first review of every item as one (as Anki does, such histories are left
    out of training; their reviews still count for everything else)."""
    from studyapp.optimize import logs_from_store

    (tmp_path / "vault").mkdir()
    with Store(tmp_path / "data" / "studyapp.sqlite3") as store:
        keys = [store.add_note(f"n{card}.md", None, None, T0) for card in range(4)]
        for card, key in enumerate(keys):
            legacy = card % 2 == 1
            for number, days in enumerate((0, 1, 4)):
                at = T0 + timedelta(days=days, hours=card)
                later = number > 0 or legacy
                store.insert_review({
                    "note_key": key, "rating": 3, "reviewed_at": utc_text(at),
                    "state_before": 2 if later else None,
                    "due_before": utc_text(at) if later else None,
                    "state_after": 2, "due_after": utc_text(at + timedelta(days=1)),
                    "scheduled_days": 1, "path": f"n{card}.md"})
        kept = logs_from_store(store)
    assert sorted({log.card_id for log in kept}) == [keys[0], keys[2]]
    assert len(kept) == 6


def test_the_refusal_is_said_before_anything_is_kept_even_with_a_fit_in_use(tmp_path, capsys, monkeypatch):
    """A first good fit stays the one in use (and the only one logged) when a second is refused."""
    options = _store_with_history(tmp_path)
    code, out, err = run(capsys, ["optimize", *options])
    assert code == 0, err
    good = stored_params(tmp_path)
    monkeypatch.setattr(fsrs_rs_python, "FSRS", optimizer_returning(BAD["nan"]))
    code, out, err = run(capsys, ["optimize", *options])
    assert code == 1 and stored_params(tmp_path) == good and len(logged_params(tmp_path)) == 1
    assert json.loads(good[0][0]) != pytest.approx(DEFAULT_PARAMETERS)


def test_a_database_holding_an_unusable_fit_from_before_still_works(tmp_path, capsys):
    """A fit stored before `optimize` checked fits (NaN parameters) stopped every command that
    builds a scheduler, upgrade or not: such a set is passed over for the defaults."""
    options = _store_with_history(tmp_path)
    with Store(tmp_path / "data" / "studyapp.sqlite3") as store:
        store.save_params([math.nan] * len(DEFAULT_PARAMETERS), T0, None, None, 600)
    for command in (["stats", "--json"], ["due", "--json"]):
        code, out, err = run(capsys, [*command, *options])
        assert code == 0, (command, err)
