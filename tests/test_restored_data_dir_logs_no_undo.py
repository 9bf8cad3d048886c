"""Device A's data dir is restored from a copy taken before its last review (Time Machine,
rsync), while another device's file has left the vault folder (B ran `history-log data-dir`),
which A's cache -- the copy's `log_files` still names B's file -- sees as a log that shrank.
`relog_lost_changes` (b209614) takes every review of A's own file that the restored database
lacks for one A undid, and logs an undo of it: the review A made after the copy, which the log
would have replayed back into the database (the database is a cache of the log), is undone on
every device. A review lost."""

from __future__ import annotations

import json
import shutil

from history_helpers import cli, make_vault, review_log


def test_a_restored_data_dir_undoes_none_of_its_own_reviews(tmp_path, capsys):
    vault = make_vault(tmp_path / "vault")
    data_a, data_b, copy = tmp_path / "a", tmp_path / "b", tmp_path / "a.copy"
    cli(capsys, vault, data_b, "rate", "a.md", "--rating", "good", now="2026-11-20T07:30")
    cli(capsys, vault, data_a, "rate", "b.md", "--rating", "good", now="2026-11-20T08:00")
    shutil.copytree(data_a, copy)  # the data dir backed up
    cli(capsys, vault, data_a, "rate", "c.md", "--rating", "good", now="2026-11-20T08:10")
    cli(capsys, vault, data_b, "history-log", "data-dir", now="2026-11-20T09:00")
    shutil.rmtree(data_a)
    shutil.copytree(copy, data_a)  # ... and restored

    cli(capsys, vault, data_a, "due", now="2026-11-20T09:30")

    events = [json.loads(line) for f in (vault / ".studyapp" / "log").glob("*.jsonl")
              for line in f.read_text().splitlines()]
    assert [e for e in events if e["kind"] == "undo"] == [], "an undo the user never made"
    assert "c.md" in [row[0] for row in review_log(data_a)], "the review after the copy is lost"
