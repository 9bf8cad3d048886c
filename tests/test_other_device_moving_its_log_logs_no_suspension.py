"""Device B (sharing the vault's log) suspends a note; A replays it. B then moves its log into
its data dir (`history-log data-dir`): B's file leaves the vault folder, which A's cache sees
as a log that shrank. `sync.relog_lost_changes` (b209614) takes that for an older copy of A's
own file put back and logs B's suspension again, as A's own event, stamped with A's time --
(twice in one command where A's own file is empty or absent, as `adopt_database` logs
suspended cards then too). B meanwhile unsuspended the note; when B moves its log back
(`history-log vault`) the replay orders A's phantom suspension after B's unsuspension, and both
devices say suspended: a value the user did not make (the user's last act was to unsuspend)."""

from __future__ import annotations

import json

from history_helpers import card_states, cli, make_vault


def _events(vault, data):
    device = json.loads((data / "data-dir.json").read_text())["id"]
    log = vault / ".studyapp" / "log" / f"{device}.jsonl"
    return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


def _scenario(tmp_path, capsys):
    vault = make_vault(tmp_path / "vault")
    data_a, data_b = tmp_path / "a", tmp_path / "b"
    cli(capsys, vault, data_b, "rate", "a.md", "--rating", "good", now="2026-11-20T07:30")
    cli(capsys, vault, data_b, "suspend", "a.md", now="2026-11-20T08:00")
    cli(capsys, vault, data_a, "rate", "c.md", "--rating", "good", now="2026-11-20T08:10")
    assert card_states(data_a)["a.md"][6] == 1
    cli(capsys, vault, data_b, "history-log", "data-dir", now="2026-11-20T09:00")
    cli(capsys, vault, data_b, "unsuspend", "a.md", now="2026-11-20T09:10")
    cli(capsys, vault, data_a, "due", now="2026-11-20T09:30")
    return vault, data_a, data_b


def test_a_device_logs_no_suspension_it_never_made_when_another_device_moves_its_log(tmp_path, capsys):
    vault, data_a, _ = _scenario(tmp_path, capsys)
    made_here = [e["kind"] for e in _events(vault, data_a) if e["kind"] in ("suspend", "unsuspend")]
    assert made_here == [], f"A logged {made_here} that the user never did on A"


def test_an_unsuspension_on_the_device_that_moved_its_log_stands_when_it_moves_back(tmp_path, capsys):
    vault, data_a, data_b = _scenario(tmp_path, capsys)
    cli(capsys, vault, data_b, "history-log", "vault", now="2026-11-20T10:30")
    cli(capsys, vault, data_b, "sync", now="2026-11-20T11:00")
    cli(capsys, vault, data_a, "sync", now="2026-11-20T11:00")

    assert card_states(data_b)["a.md"][6] == 0, "B's unsuspension was undone by A's phantom suspend"
    assert card_states(data_a)["a.md"][6] == 0
