"""A review event from another device's log whose `values_before` says `review_count:
1000000000` (the most a note may hold, `MAX_REVIEW_COUNT`; the log's check lets it through) is
replayed to a count of 1000000001, which the writeback refuses with a TypeError: every command
on this device (sync, rate, due) ends in "internal error (a bug in studyapp)" until the line is
removed by hand. A hostile or damaged line is to be left out (or the count held at the limit),
never a traceback."""

from __future__ import annotations

import json
import shutil

from history_helpers import cli, make_vault


def test_a_logged_count_at_the_limit_does_not_crash_every_command(tmp_path, capsys):
    vault_a = make_vault(tmp_path / "a" / "vault")
    vault_b = tmp_path / "b" / "vault"
    shutil.copytree(vault_a, vault_b)
    data_a, data_b = tmp_path / "a" / "data", tmp_path / "b" / "data"
    cli(capsys, vault_b, data_b, "rate", "b.md", "--rating", "good", now="2026-11-20T08:00")
    (log,) = (vault_b / ".studyapp" / "log").glob("*.jsonl")
    event = json.loads(log.read_text())
    event["values_before"]["review_count"] = 10**9
    folder = vault_a / ".studyapp" / "log"
    folder.mkdir(parents=True)
    (folder / log.name).write_text(json.dumps(event) + "\n")

    cli(capsys, vault_a, data_a, "sync", now="2026-11-20T08:30")  # exit 70: internal error
    cli(capsys, vault_a, data_a, "due", now="2026-11-20T08:40")
