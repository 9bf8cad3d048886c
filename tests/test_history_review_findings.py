"""Review findings on the review log: each test failed before its fix.

1. a rename noticed at an earlier time than the old path's last event must not take that event
   from the note (a refused `rate` at an earlier `--now`, clock skew between devices);
2. a note whose mtime is in the future settles (no replay on every command), and a replay the
   recheck row alone triggered does not repeat the log's left-out lines;
3. `sync --full` says each left-out line once;
4. the quick check of a review event checks the step range too, whatever it saw before.
"""

from __future__ import annotations

import json
import os
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from history_helpers import card_states, cli, make_vault, owned_keys

from studyapp.cli import main
from studyapp.history import events as events_module
from studyapp.history.events import BadEvent, Event, EventKind
from studyapp.reviews import move_time


def log_lines(vault: Path) -> list[dict]:
    found: list[dict] = []
    for log in sorted((vault / ".studyapp" / "log").glob("*.jsonl")):
        found += [json.loads(line) for line in log.read_text().splitlines() if line.strip()]
    return found


def run(capsys, vault: Path, data: Path, *args: str, now: str) -> tuple[int, str, str]:
    capsys.readouterr()
    code = main([*args, "--vault", str(vault), "--data-dir", str(data), "--now", now])
    out, err = capsys.readouterr()
    return code, out, err


def reviewed_twice_then_renamed(capsys, tmp_path) -> tuple[Path, Path]:
    vault, data = make_vault(tmp_path / "vault"), tmp_path / "data"
    for day in ("2026-11-20T10:00", "2026-11-22T10:00"):
        cli(capsys, vault, data, "rate", "b.md", "--rating", "good", now=day)
    os.rename(vault / "b.md", vault / "moved.md")
    return vault, data


def assert_moved_note_keeps_both_reviews(vault: Path, data: Path) -> None:
    cards = card_states(data)
    assert "b.md" not in cards and cards["moved.md"][7] == 2  # reps
    assert "review_count: 2" in owned_keys(vault)["moved.md"]


def test_a_refused_rate_that_notices_a_rename_loses_no_review(capsys, tmp_path):
    vault, data = reviewed_twice_then_renamed(capsys, tmp_path)
    code, _, err = run(capsys, vault, data, "rate", "moved.md", "--rating", "good",
                       now="2026-11-21T10:00")
    assert code == 1 and "before the previous one" in err
    lines = log_lines(vault)
    last_review = max(datetime.fromisoformat(e["at"]) for e in lines if e["kind"] == "review")
    (move,) = [e for e in lines if e["kind"] == "move"]
    assert (move["note"], move["to"]) == ("b.md", "moved.md")
    assert datetime.fromisoformat(move["at"]) >= last_review  # sorts after the 11-22 review
    device2 = tmp_path / "device2"
    cli(capsys, vault, device2, "due", now="2026-11-23T10:00")  # replays the whole log
    assert_moved_note_keeps_both_reviews(vault, device2)
    cli(capsys, vault, data, "sync", "--full", now="2026-11-23T10:00")
    assert_moved_note_keeps_both_reviews(vault, data)


def test_a_rename_noticed_by_a_device_whose_clock_is_behind_loses_no_review(capsys, tmp_path):
    vault, ahead = make_vault(tmp_path / "vault"), tmp_path / "ahead"
    behind = tmp_path / "behind"
    cli(capsys, vault, ahead, "rate", "b.md", "--rating", "good", now="2026-11-20T10:00")
    cli(capsys, vault, behind, "due", now="2026-11-20T11:00")  # knows b.md
    cli(capsys, vault, ahead, "rate", "b.md", "--rating", "good", now="2026-11-22T10:00")
    os.rename(vault / "b.md", vault / "moved.md")
    cli(capsys, vault, behind, "due", now="2026-11-21T10:00")  # notices (and logs) the rename
    assert [e["to"] for e in log_lines(vault) if e["kind"] == "move"] == ["moved.md"]
    for data in (ahead, behind, tmp_path / "third"):
        cli(capsys, vault, data, "sync", "--full", now="2026-11-23T10:00")
        assert_moved_note_keeps_both_reviews(vault, data)


def test_a_rename_noticed_at_the_instant_of_the_last_review_still_takes_a_review(capsys, tmp_path):
    """The same frozen `--now` as the last review: the move must not sort after the review of
    the new path logged right after it."""
    vault, data = reviewed_twice_then_renamed(capsys, tmp_path)
    cli(capsys, vault, data, "rate", "moved.md", "--rating", "good", now="2026-11-22T10:00")
    device2 = tmp_path / "device2"
    cli(capsys, vault, device2, "due", now="2026-11-23T10:00")
    cards = card_states(device2)
    assert "b.md" not in cards and cards["moved.md"][7] == 3
    assert "review_count: 3" in owned_keys(vault)["moved.md"]


def test_a_suspension_at_an_earlier_time_that_notices_a_rename_keeps_the_history(capsys, tmp_path):
    """Suspending is allowed at any `--now`; the move it notices sorts after the last review,
    so the suspension must too, or the replay takes it for a note of its own at the new path."""
    vault, data = reviewed_twice_then_renamed(capsys, tmp_path)
    cli(capsys, vault, data, "suspend", "moved.md", now="2026-11-21T10:00")
    device2 = tmp_path / "device2"
    cli(capsys, vault, device2, "due", now="2026-11-23T10:00")
    for where in (data, device2):
        cards = card_states(where)
        assert "b.md" not in cards and cards["moved.md"][7] == 2 and cards["moved.md"][6] == 1
    assert "review_count: 2" in owned_keys(vault)["moved.md"]


def test_a_rate_before_the_old_paths_last_event_is_refused_when_it_notices_the_rename(capsys, tmp_path):
    """A suspension after the last review: the rate's time is after that review, but the move
    sorts after the suspension, and a review of the new path before the move is lost."""
    vault, data = make_vault(tmp_path / "vault"), tmp_path / "data"
    cli(capsys, vault, data, "rate", "b.md", "--rating", "good", now="2026-11-20T10:00")
    cli(capsys, vault, data, "suspend", "b.md", now="2026-11-25T10:00")
    os.rename(vault / "b.md", vault / "moved.md")
    code, _, err = run(capsys, vault, data, "rate", "moved.md", "--rating", "good",
                       now="2026-11-22T10:00")
    assert code == 1 and "b.md" in err and "2026-11-25" in err
    assert [e["kind"] for e in log_lines(vault)] == ["review", "suspend", "move"]
    device2 = tmp_path / "device2"
    cli(capsys, vault, device2, "due", now="2026-11-26T10:00")
    cards = card_states(device2)
    assert "b.md" not in cards and cards["moved.md"][7] == 1 and cards["moved.md"][6] == 1


def test_a_move_sorts_after_every_event_of_its_old_path_and_no_later():
    late = datetime(2026, 11, 22, 10, tzinfo=timezone.utc)
    now = late - timedelta(days=1)

    def event(kind: EventKind, device: str, note: str, at: datetime, **data) -> Event:
        return Event(f"{kind.value}{device}{at:%d}", kind, at, device, note, data)

    review = event(EventKind.REVIEW, "m", "b.md", late)
    assert move_time([review], "b.md", "m", now) == late  # its own: the file order puts it after
    assert move_time([review], "b.md", "z", now) == late  # a lower device id sorts first
    assert move_time([review], "b.md", "a", now) == late + timedelta(microseconds=1)
    assert move_time([review], "c.md", "a", now) == now  # another note's event
    assert move_time([review], "b.md", "a", late + timedelta(hours=1)) == late + timedelta(hours=1)
    into = event(EventKind.MOVE, "m", "x.md", late, to="b.md")  # the move that made b.md
    assert move_time([into], "b.md", "a", now) == late + timedelta(microseconds=1)
    undo = event(EventKind.UNDO, "m", "b.md", late, review="r")  # its time orders nothing
    assert move_time([undo], "b.md", "a", now) == now


def ahead_of_the_log(capsys, tmp_path) -> tuple[Path, Path, Path]:
    """Device one reviewed b.md once; b.md now says 5 reviews (more than the log)."""
    vault = make_vault(tmp_path / "vault")
    one, two = tmp_path / "one", tmp_path / "two"
    cli(capsys, vault, one, "rate", "b.md", "--rating", "good", now="2026-11-20T09:00")
    note = vault / "b.md"
    note.write_text(note.read_text().replace("review_count: 1", "review_count: 5"))
    return vault, two, note


def recheck_pending(data: Path) -> bool:
    import sqlite3

    from studyapp.history.sync import RECHECK

    with sqlite3.connect(data / "studyapp.sqlite3") as conn:
        return conn.execute("SELECT 1 FROM log_files WHERE device = ?", (RECHECK,)).fetchone() is not None


def test_a_note_with_a_future_mtime_is_settled_and_corrected(capsys, tmp_path):
    """A skewed clock (or a tool setting mtimes) puts a note's mtime in the future: it is not
    'written a moment ago', so it must not make every command replay the log forever."""
    vault, two, note = ahead_of_the_log(capsys, tmp_path)
    future = time.time() + 3600
    os.utime(note, (future, future))
    cli(capsys, vault, two, "sync", now="2026-11-20T10:00")
    assert "review_count: 1" in owned_keys(vault)["b.md"]
    assert not recheck_pending(two)
    assert "up to date" in cli(capsys, vault, two, "sync", now="2026-11-20T10:00")


def test_a_recheck_replay_does_not_repeat_the_logs_left_out_lines(capsys, tmp_path):
    vault, two, note = ahead_of_the_log(capsys, tmp_path)
    (log,) = (vault / ".studyapp" / "log").glob("*.jsonl")
    with log.open("a") as handle:
        handle.write('{"kind": "review"}\n')
    code, _, err = run(capsys, vault, two, "due", now="2026-11-20T10:00")
    assert code == 0 and err.count("left out") == 1, err
    assert recheck_pending(two) and "review_count: 5" in owned_keys(vault)["b.md"]
    code, _, err = run(capsys, vault, two, "due", now="2026-11-20T10:00")  # replays: the recheck
    assert code == 0 and "left out" not in err, err
    old = time.time() - 60
    os.utime(note, (old, old))
    code, _, err = run(capsys, vault, two, "due", now="2026-11-20T10:00")  # settled: corrected
    assert code == 0 and "left out" not in err, err
    assert "review_count: 1" in owned_keys(vault)["b.md"] and not recheck_pending(two)
    with log.open("a") as handle:  # the log itself changed: its left-out lines are said again
        handle.write("not json\n")
    code, _, err = run(capsys, vault, two, "due", now="2026-11-20T10:00")
    assert code == 0 and err.count("left out") == 1 and "2 lines" in err, err


def test_sync_full_says_each_left_out_line_once(capsys, tmp_path):
    vault, data = make_vault(tmp_path / "vault"), tmp_path / "data"
    cli(capsys, vault, data, "rate", "b.md", "--rating", "good", now="2026-11-20T09:00")
    (log,) = (vault / ".studyapp" / "log").glob("*.jsonl")
    with log.open("a") as handle:
        handle.write('{"kind": "review"}\n')
    for where in (tmp_path / "fresh", data):  # the opening replays too / only --full replays
        code, out, err = run(capsys, vault, where, "sync", "--full", now="2026-11-20T10:00")
        assert code == 0 and "replayed" in out
        assert err.count("left out") == 1, err


def test_sync_full_shows_a_log_names_control_characters_not_obeys_them(capsys, tmp_path):
    """The forced replay's lines can name another device's file: shown as the opening's are."""
    vault, data = make_vault(tmp_path / "vault"), tmp_path / "data"
    cli(capsys, vault, data, "rate", "b.md", "--rating", "good", now="2026-11-20T09:00")
    (vault / ".studyapp" / "log" / "x\x1b[2J.jsonl").mkdir()
    cli(capsys, vault, data, "due", now="2026-11-20T10:00")  # the opening says it
    code, _, err = run(capsys, vault, data, "sync", "--full", now="2026-11-20T10:00")
    assert code == 0 and "not a regular file" in err and "\x1b" not in err, err


def review_line(step: object, values_before: dict | None) -> dict:
    return {"id": "e1", "kind": "review", "at": "2026-11-20T10:00:00.000000+00:00",
            "device": "d", "note": "b.md", "rating": 3, "title": "B",
            "values_before": values_before,
            "after": [1, step, 2.3, 5.0, "2026-11-20T10:10:00.000000+00:00",
                      "2026-11-20T10:00:00.000000+00:00"]}


@pytest.mark.parametrize("step", [-5, 2**31])
@pytest.mark.parametrize("values_before", [None, {"last_reviewed": "2026-11-01", "review_count": 1}])
@pytest.mark.parametrize("warm", [False, True])
def test_a_reviews_step_out_of_range_is_refused_cold_or_warm(monkeypatch, step, values_before, warm):
    """Whether the quick check runs depends on dates seen before (`_good_days`): the answer
    must not."""
    monkeypatch.setattr(events_module, "_good_days", {"2026-11-01": True} if warm else {})
    with pytest.raises(BadEvent, match="after"):
        Event.from_json(review_line(step, values_before))
    Event.from_json(review_line(0, values_before))  # the same line with a usable step


def test_a_logged_review_with_a_step_out_of_range_is_named_by_file_and_line(capsys, tmp_path):
    vault, data = make_vault(tmp_path / "vault"), tmp_path / "data"
    cli(capsys, vault, data, "rate", "b.md", "--rating", "good", now="2026-11-20T09:00")
    (log,) = (vault / ".studyapp" / "log").glob("*.jsonl")
    first = json.loads(log.read_text().splitlines()[0])
    assert first["kind"] == "review" and first["after"][1] is not None
    line = {**first, "id": "f" * 32, "at": "2026-11-21T09:00:00.000000+00:00",
            "before": first["after"], "after": [first["after"][0], -5, *first["after"][2:]]}
    del line["seed"]  # a later review, as studyapp writes it: the quick check's kind of line
    with log.open("a") as handle:
        handle.write(json.dumps(line) + "\n")
    Event.from_json(first)  # its dates are now known: the quick check takes the next line
    code, _, err = run(capsys, vault, data, "sync", "--full", now="2026-11-21T10:00")
    assert code == 0 and f"{log} line 2" in err and "could not use" not in err, err
