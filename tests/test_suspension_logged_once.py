"""This device's log file is emptied (a sync tool's conflict leaves a 0-byte copy; the older
copy put back is the empty file the log began as). The shrink makes `adopt_database` write the
database's reviews back and -- the log read holding no event at all (`logged` is an empty set,
so `if not logged`) -- the suspended cards' SUSPEND events too; `relog_lost_changes` (b209614)
then compares the database with the events read *before* that append, finds no suspension of
the note, and logs it again: two suspensions of one note at one instant, from one command."""

from __future__ import annotations

import json

from history_helpers import card_states, cli, make_vault


def _own_log(vault):
    (log,) = (vault / ".studyapp" / "log").glob("*.jsonl")
    return log


def test_a_suspension_is_logged_once_when_the_own_log_file_was_emptied(tmp_path, capsys):
    vault, data = make_vault(tmp_path / "vault"), tmp_path / "data"
    cli(capsys, vault, data, "rate", "b.md", "--rating", "good", now="2026-11-20T08:00")
    cli(capsys, vault, data, "rate", "a.md", "--rating", "good", now="2026-11-20T08:05")
    cli(capsys, vault, data, "suspend", "a.md", now="2026-11-20T08:06")

    _own_log(vault).write_bytes(b"")  # the sync tool leaves an empty copy
    cli(capsys, vault, data, "due", now="2026-11-20T08:30")
    cli(capsys, vault, data, "due", now="2026-11-20T08:40")

    assert card_states(data)["a.md"][6] == 1
    events = [json.loads(line) for line in _own_log(vault).read_text().splitlines()]
    suspensions = [(e["note"], e["at"]) for e in events if e["kind"] == "suspend"]
    assert len(suspensions) == 1, f"the suspension was logged {len(suspensions)} times: {suspensions}"
