"""A line of some device's log that is JSON but not an event this studyapp can use (a field of
another type, a time outside the calendar studyapp keeps, FSRS parameters of another version)
is left out of the replay and reported once, naming its file and line: it never stops a
command, on this device or any other, and never leaves the cache half replayed."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from history_helpers import cli, make_vault, review_log
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from studyapp.cli import main
from studyapp.context import build_context
from studyapp.history.eventlog import EventLog
from studyapp.history.events import Event, EventKind, new_event

ROOT = Path(__file__).resolve().parent.parent
T0 = datetime(2026, 11, 20, 10, 0, tzinfo=timezone.utc)
AT = "2026-11-20T11:00:00+00:00"
CARD = {"note_key": 0, "state": 2, "step": None, "stability": 5.0, "difficulty": 5.0,
        "due": "2026-11-25T10:00:00+00:00", "last_review": "2026-11-20T10:00:00+00:00",
        "suspended": False, "reps": 1, "lapses": 0, "legacy": False}
FSRS6 = [0.212, 1.2931, 2.3065, 8.2956, 6.4133, 0.8334, 3.0194, 0.001, 1.8722, 0.1666, 0.796,
         1.4835, 0.0614, 0.2629, 1.6483, 0.6014, 1.8729, 0.5425, 0.0912, 0.0658, 0.1542]


def line(kind: str, note: str | None = "c.md", at: str = AT, **fields) -> dict:
    return {"id": f"bad-{kind}", "kind": kind, "at": at, "device": "other", "note": note,
            **fields}


# each case: the lines another device's file gains after one good event
BAD = {
    "undo_naming_a_list": [line("undo", "a.md", review=["x"])],
    "undo_naming_an_object": [line("undo", "a.md", review={})],
    "suspend_seed_an_empty_card": [line("suspend", seed="{}")],
    "suspend_seed_not_json": [line("suspend", seed="notjson")],
    "suspend_seed_due_without_offset": [
        line("suspend", seed=json.dumps({**CARD, "due": "2026-11-25T10:00:00"}))],
    "suspend_seed_stability_zero": [line("suspend", seed=json.dumps({**CARD, "stability": 0}))],
    "import_seed_an_empty_card": [line("import", seed="{}")],
    "params_of_fsrs5": [line("params", None, parameters=FSRS6[:19])],
    "params_three": [line("params", None, parameters=[1, 2, 3])],
    "params_text": [line("params", None, parameters=["a"] * 21)],
    "params_out_of_bounds": [line("params", None, parameters=[1e9] * 21)],
    "params_not_a_number": [line("params", None, parameters=[*FSRS6[:20], math.nan])],
    "params_log_loss_text": [line("params", None, parameters=FSRS6, log_loss_before={"x": 1})],
    "drill_without_a_drill_id": [line("drill", None)],
    "drill_fields_of_other_types": [line("drill", None, drill={"a": 1}, verdict=[1], summary={},
                                         duration_ms="x")],
    "drill_verdict_unknown": [line("drill", None, drill="sdpa", verdict="maybe")],
    "drill_review_huge_counts": [line("drill_review", None, drill="sdpa", rating=3,
                                      hints=1e30)],
    "drill_review_rating_text": [line("drill_review", None, drill="sdpa", rating="good")],
    "review_in_year_1": [line("review", at="0001-01-01T00:00:00+00:00", rating=3)],
    "review_in_year_9999": [line("review", at="9999-12-31T23:00:00+00:00", rating=3)],
    "review_due_without_offset": [line("review", rating=3, due="2026-12-01T00:00:00")],
    "review_due_in_year_9999": [line("review", rating=3, due="9999-12-31T00:00:00+00:00")],
    "review_values_before_a_list": [line("review", rating=3, values_before=[1])],
    "review_rating_out_of_range": [line("review", rating=7)],
    "review_title_a_list": [line("review", "gone.md", rating=3, title=["x"])],
    "review_values_before_year_1_then_undone": [
        line("review", rating=3, values_before={"last_reviewed": "0001-01-01"}),
        {**line("undo", review="bad-review"), "id": "bad-undo"}],
    "move_out_of_the_vault": [line("move", "c.md", to="../../outside.md")],
}


@pytest.fixture
def vault(tmp_path, capsys):
    """d1 reviewed b.md; device "other" reviewed a.md, then wrote one bad line."""
    vault, data = make_vault(tmp_path / "vault"), tmp_path / "d1"
    cli(capsys, vault, data, "rate", "b.md", "--rating", "good", now="2026-11-20T10:00")
    good = new_event(EventKind.REVIEW, T0 + timedelta(minutes=30), "other", "a.md", rating=3,
                     fuzz=False, values_before={"review_count": 2})
    EventLog(vault / ".studyapp" / "log", "other").append(good)
    return vault, data


def run(capsys, vault: Path, data: Path, *args: str) -> tuple[int, str]:
    """Run one command: its exit code and its stderr (its stdout is left in `capsys`)."""
    capsys.readouterr()
    code = main([*args, "--vault", str(vault), "--data-dir", str(data),
                 "--now", "2026-11-25T10:00"])
    out, err = capsys.readouterr()
    print(out, end="")
    return code, err


@pytest.mark.parametrize("case", sorted(BAD))
def test_a_bad_line_is_left_out_and_reported_once(vault, capsys, case):
    vault, data = vault
    other = vault / ".studyapp" / "log" / "other.jsonl"
    with open(other, "a") as handle:
        for item in BAD[case]:
            handle.write(json.dumps(item) + "\n")
    code, err = run(capsys, vault, data, "sync")
    assert code == 0, err
    reported = [text for text in err.splitlines() if "left out" in text]
    assert len(reported) == 1, err
    assert f"{other} line 2" in reported[0]
    assert "Traceback" not in err and "studyapp: error" not in err
    for command in (("due",), ("rate", "c.md", "--rating", "good"), ("stats", "--json")):
        code, err = run(capsys, vault, data, *command)
        assert code == 0, err
        assert "left out" not in err  # said once, by the replay that left it out
    assert {row[0] for row in review_log(data)} == {"a.md", "b.md", "c.md"}


def test_a_bad_line_still_counts_for_doctor(vault, capsys):
    vault, data = vault
    other = vault / ".studyapp" / "log" / "other.jsonl"
    with open(other, "a") as handle:
        handle.write(json.dumps(line("undo", "a.md", review=["x"])) + "\n")
    run(capsys, vault, data, "sync")
    code, _ = run(capsys, vault, data, "doctor")
    out = capsys.readouterr().out
    (history,) = [text for text in out.splitlines() if text.startswith("review log")]
    assert "1 line left out" in history and f"{other} line 2" in history


def test_the_reason_names_the_field(tmp_path):
    log = EventLog(tmp_path / "log", "dev")
    log.folder.mkdir()
    log.own_file.write_text(json.dumps(line("undo", review=["x"])) + "\n"
                            + json.dumps(line("params", None, parameters=FSRS6[:19])) + "\n")
    contents = log.read()
    assert contents.events == [] and contents.skipped == 2
    assert contents.first_skipped == f"{log.own_file} line 1: 'review' is not an event id"


def test_the_replay_leaves_out_what_it_cannot_use_too():
    """Events made without `from_json`'s checks (in code) are left out, counted, as well."""
    from studyapp.config import Settings
    from studyapp.history.replay import replay

    def made(kind, note, **data):
        return Event(f"e-{kind.value}", kind, T0, "dev", note, data)

    replayed = replay([made(EventKind.UNDO, "a.md", review=["x"]),
                       made(EventKind.SUSPEND, "a.md", seed="{}"),
                       made(EventKind.PARAMS, None, parameters=FSRS6[:19])], Settings())
    assert replayed.malformed == 2 and replayed.params == []  # the undo names nothing


def test_every_event_studyapp_writes_is_read_back(tmp_path, capsys):
    """The checks refuse nothing studyapp itself writes."""
    vault, data = make_vault(tmp_path / "vault"), tmp_path / "data"
    steps = [("rate", "a.md", "--rating", "good", "--duration", "7"), ("undo",),
             ("rate", "b.md", "--rating", "again"), ("suspend", "c.md"), ("unsuspend", "c.md"),
             ("rate", "c.md", "--rating", "easy")]
    for minute, step in enumerate(steps):
        cli(capsys, vault, data, *step, now=f"2026-11-20T10:{minute:02d}")
    (vault / "a.md").rename(vault / "moved.md")
    cli(capsys, vault, data, "due", now="2026-11-20T11:00")
    (log_file,) = (vault / ".studyapp" / "log").glob("*.jsonl")
    contents = EventLog(log_file.parent, "x").read()
    kinds = {e.kind for e in contents.events}
    assert contents.skipped == 0 and len(contents.events) == len(steps) + 1
    assert {EventKind.REVIEW, EventKind.UNDO, EventKind.SUSPEND, EventKind.UNSUSPEND,
            EventKind.MOVE} <= kinds


def test_a_replay_that_fails_leaves_the_cache_to_replay_again(tmp_path, capsys, monkeypatch):
    """The log sizes that mark the cache up to date are stored only once the replay's writes
    are all done: an exception half way makes the next command replay again."""
    from studyapp.history import sync
    from studyapp.reviews import ReviewService

    vault, data = make_vault(tmp_path / "vault"), tmp_path / "d1"
    cli(capsys, vault, data, "rate", "b.md", "--rating", "good", now="2026-11-20T10:00")
    EventLog(vault / ".studyapp" / "log", "other").append(new_event(
        EventKind.REVIEW, T0 + timedelta(minutes=30), "other", "c.md", rating=3, fuzz=False))

    def broken(service, replayed, result):
        raise RuntimeError("cut short")

    monkeypatch.setattr(sync, "write_owned_keys", broken)
    ctx = build_context(vault=str(vault), data_dir=str(data), now=T0 + timedelta(days=1))
    with pytest.raises(RuntimeError):
        ReviewService(ctx)
    monkeypatch.undo()
    with ReviewService(ctx) as service:
        assert service.synced.replayed == 2  # replayed again, owned keys written this time
        assert service.synced.written == ["c.md"]


def test_a_fifo_or_folder_named_like_a_log_is_not_read(tmp_path, capsys):
    """Opening a FIFO waits for a writer forever: only regular files are logs."""
    vault, data = make_vault(tmp_path / "vault"), tmp_path / "data"
    cli(capsys, vault, data, "rate", "a.md", "--rating", "good", now="2026-11-20T10:00")
    folder = vault / ".studyapp" / "log"
    (folder / "dir.jsonl").mkdir()
    os.mkfifo(folder / "pipe.jsonl")
    assert set(EventLog(folder, "x").sizes()) == {json.loads(
        (data / "data-dir.json").read_text())["id"]}
    done = subprocess.run(
        [sys.executable, "-m", "studyapp", "sync", "--full", "--vault", str(vault),
         "--data-dir", str(data), "--now", "2026-11-21T10:00"],
        capture_output=True, text=True, timeout=20, env=dict(os.environ, PYTHONPATH=str(ROOT)))
    assert done.returncode == 0, done.stderr
    (note,) = [text for text in done.stderr.splitlines() if "pipe.jsonl" in text]
    assert "dir.jsonl" in note and "not a regular file" in note


def test_a_fifo_in_place_of_this_devices_own_log_is_an_error_not_a_hang(tmp_path, capsys):
    vault, data = make_vault(tmp_path / "vault"), tmp_path / "data"
    cli(capsys, vault, data, "rate", "a.md", "--rating", "good", now="2026-11-20T10:00")
    (own,) = (vault / ".studyapp" / "log").glob("*.jsonl")
    own.unlink()
    os.mkfifo(own)
    done = subprocess.run(
        [sys.executable, "-m", "studyapp", "rate", "b.md", "--rating", "good", "--vault",
         str(vault), "--data-dir", str(data), "--now", "2026-11-21T10:00"],
        capture_output=True, text=True, timeout=20, env=dict(os.environ, PYTHONPATH=str(ROOT)))
    assert done.returncode == 1, done.stderr
    assert done.stderr.strip().splitlines()[-1].startswith("studyapp: error:")


@pytest.mark.parametrize("command", [("rate", "b.md", "--rating", "good"), ("sync",)])
def test_an_interrupted_review_is_reported_once(tmp_path, capsys, command):
    """The repair line reaches the terminal once, with the `studyapp:` prefix (it was also
    logged, which printed it a second time, bare)."""
    from studyapp.reviews import ReviewService

    vault, data = make_vault(tmp_path / "vault"), tmp_path / "data"
    ctx = build_context(vault=str(vault), data_dir=str(data), now=T0)
    with ReviewService(ctx) as service:
        note = service.vault.read_note("a.md")
        payload = {"file_values": {"review_count": 3}, "owner": "999999999"}  # a gone process
        service.store.add_journal("review", "a.md", note.content_hash, None, payload, T0)
    done = subprocess.run(
        [sys.executable, "-m", "studyapp", *command, "--vault", str(vault), "--data-dir",
         str(data), "--now", "2026-11-21T10:00"],
        capture_output=True, text=True, timeout=60, env=dict(os.environ, PYTHONPATH=str(ROOT)))
    assert done.returncode == 0, done.stderr
    repaired = [text for text in done.stderr.splitlines() if "interrupted review" in text]
    assert repaired == ["studyapp: a.md: dropped an interrupted review (file not written)"]


# -- fuzz: any JSON in any field of any kind is an event or a line left out, never a crash --

TIMES = st.sampled_from(["2026-11-20T11:00:00+00:00", "2026-11-20T11:00:00",
                         "0001-01-01T00:00:00+00:00", "9999-12-31T23:00:00+00:00",
                         "1970-01-01T00:00:00+14:00", "8900-12-31T23:00:00-12:00", "junk", ""])
JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-2**70, 2**70) | st.floats() | st.text(max_size=8)
    | TIMES,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner,
                                                                max_size=4),
    max_leaves=8)
SEEDS = st.sampled_from(["{}", "notjson", json.dumps(CARD),
                         json.dumps({**CARD, "due": "2026-11-25T10:00:00"}),
                         json.dumps({**CARD, "state": "x"}), json.dumps({**CARD, "reps": 1e30}),
                         json.dumps({**CARD, "stability": None, "difficulty": None, "state": 1,
                                     "step": 0})])
PLAUSIBLE = {
    "rating": st.integers(0, 5), "duration_ms": st.integers(-1, 2**64), "title": st.text(max_size=5),
    "values_before": st.fixed_dictionaries({}, optional={
        "last_reviewed": st.sampled_from(["2026-11-01", "0001-01-01", "junk", None]),
        "next_review": st.sampled_from(["2026-11-10", "9999-01-01", None]),
        "review_count": st.sampled_from([0, 2, "many", -1, 2.5]),
        "mastery_level": st.sampled_from([0.1, 3, None])}),
    "seed": SEEDS, "due": TIMES, "fuzz": st.booleans(),
    "before": st.just([2, None, 5.0, 5.0, "2026-11-25T10:00:00+00:00", None]),
    "after": st.lists(JSON, min_size=6, max_size=6), "sched": st.text(max_size=3),
    "review": st.sampled_from(["bad-review", "x"]), "drill": st.sampled_from(["sdpa", ""]),
    "verdict": st.sampled_from(["pass", "fail", "error", "maybe"]), "summary": st.text(max_size=5),
    "file": st.text(max_size=5), "proposed": st.integers(0, 5), "hints": st.integers(-1, 2**70),
    "runs": st.integers(0, 3), "failed_runs": st.integers(0, 3), "gave_up": st.booleans(),
    "try": st.text(max_size=3),
    "parameters": st.lists(st.floats(0, 10), min_size=19, max_size=21) | st.just(FSRS6),
    "log_loss_before": st.floats(), "log_loss_after": st.floats(),
    "review_count": st.integers(-1, 2**70), "to": st.sampled_from(["d.md", "../x.md", "/x.md", ""]),
}
HEAD = {"id": st.sampled_from(["bad-review", "e1"]) | JSON, "at": TIMES | JSON,
        "device": st.just("other") | JSON,
        "note": st.sampled_from(["c.md", "gone.md", None, "../x.md", ""]) | JSON}


@st.composite
def fuzzed_line(draw) -> dict:
    kind = draw(st.sampled_from([k.value for k in EventKind]) | JSON)
    item = {"kind": kind}
    for key, values in HEAD.items():
        if draw(st.integers(0, 9)):  # mostly there
            item[key] = draw(values)
    for key in draw(st.sets(st.sampled_from(sorted(PLAUSIBLE)), max_size=6)):
        item[key] = draw(PLAUSIBLE[key] | JSON) if draw(st.booleans()) else draw(PLAUSIBLE[key])
    return item


@pytest.fixture(scope="module")
def fuzz_vault(tmp_path_factory):
    root = tmp_path_factory.mktemp("fuzz")
    vault, data = make_vault(root / "vault"), root / "d1"
    assert main(["rate", "b.md", "--rating", "good", "--vault", str(vault), "--data-dir",
                 str(data), "--now", "2026-11-20T10:00"]) == 0
    return vault, data


@settings(max_examples=120, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(items=st.lists(fuzzed_line(), min_size=1, max_size=3))
def test_any_json_line_is_an_event_or_left_out(fuzz_vault, items):
    from studyapp.reviews import ReviewService

    vault, data = fuzz_vault
    other = vault / ".studyapp" / "log" / "other.jsonl"
    other.write_text("".join(json.dumps(item) + "\n" for item in items))
    for item in items:
        try:
            Event.from_json(item)
        except ValueError:
            pass  # left out: `BadEvent` is a ValueError
    ctx = build_context(vault=str(vault), data_dir=str(data), now=T0 + timedelta(days=5))
    with ReviewService(ctx) as service:
        result = service.sync(force=True)
        assert service.store.log_sizes()["other"] == other.stat().st_size
        service.load()
        service.note_cards(service.vault.load().notes)
    assert not [p for p in result.problems if "could not write" in p], result.problems


@pytest.mark.parametrize("command", [("due",), ("stats", "--json"), ("drills", "--json"), ("rebuild",)])
def test_whichever_command_replays_first_says_what_it_left_out(vault, capsys, command):
    """Only `sync` and the rating commands printed what opening the history found: with `due`
    first, a left-out line (or a repaired write) was said nowhere."""
    vault, data = vault
    other = vault / ".studyapp" / "log" / "other.jsonl"
    with open(other, "a") as handle:
        handle.write(json.dumps(line("undo", "a.md", review=["x"])) + "\n")
    code, err = run(capsys, vault, data, *command)
    assert code == 0, err
    reported = [text for text in err.splitlines() if "left out" in text]
    assert len(reported) == 1 and f"{other} line 2" in reported[0], err


def test_a_log_file_name_is_printed_as_text(vault, capsys):
    """A file name is the sync tool's or another device's to choose: an escape sequence in it
    reached the terminal in the left-out line."""
    vault, data = vault
    odd = vault / ".studyapp" / "log" / "dev\x1b]0;owned\x07.jsonl"
    odd.write_text(json.dumps(line("undo", "a.md", review=["x"])) + "\n")
    code, err = run(capsys, vault, data, "due")
    assert code == 0, err
    assert "left out" in err and "\x1b" not in err and "\x07" not in err
    assert "dev␛]0;owned␇.jsonl" in err
