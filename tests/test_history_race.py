"""Two devices on one vault folder: a replay that runs while the other device is between writing
a note and logging the review must not write the note back to the state without that review."""

from __future__ import annotations

import json
import os
import re
import time
from pathlib import Path

from history_helpers import cli, make_vault

import studyapp.review_journal as journal


def review_count(note: Path) -> int:
    found = re.search(r"^review_count: (\d+)$", note.read_text(), re.M)
    assert found is not None
    return int(found.group(1))


def logged_reviews(vault: Path, note: str) -> int:
    lines = [line for log in (vault / ".studyapp" / "log").glob("*.jsonl")
             for line in log.read_text().splitlines()]
    return sum(1 for line in lines if json.loads(line).get("kind") == "review" and json.loads(line).get("note") == note)


def test_a_sync_inside_another_devices_review_leaves_its_note_alone(tmp_path, capsys, monkeypatch):
    vault = make_vault(tmp_path / "vault")
    one, two = tmp_path / "one", tmp_path / "two"
    cli(capsys, vault, one, "rate", "b.md", "--rating", "good", now="2026-11-20T09:00")
    cli(capsys, vault, two, "sync", now="2026-11-20T10:00")

    append = journal._append_logged
    synced = []

    def sync_first(*args, **kwargs):
        """Device two replays after device one wrote the note, before it logged the review."""
        if not synced:
            synced.append(review_count(vault / "b.md"))
            cli(capsys, vault, two, "sync", "--full", now="2026-11-22T10:00")
        return append(*args, **kwargs)

    monkeypatch.setattr(journal, "_append_logged", sync_first)
    cli(capsys, vault, one, "rate", "b.md", "--rating", "good", now="2026-11-22T09:00")
    monkeypatch.setattr(journal, "_append_logged", append)
    assert synced == [2]  # the race happened: the note held both reviews when two replayed
    assert review_count(vault / "b.md") == 2

    cli(capsys, vault, one, "rate", "b.md", "--rating", "good", now="2026-11-26T09:00")
    cli(capsys, vault, two, "sync", now="2026-11-26T10:00")
    assert logged_reviews(vault, "b.md") == 3 and review_count(vault / "b.md") == 3


def test_a_stale_copy_put_back_is_still_corrected(tmp_path, capsys):
    """What the replay's rewrite is for: a note put back older than the log (a sync tool, a git
    checkout) is corrected, once its file has settled."""
    vault = make_vault(tmp_path / "vault")
    one, two = tmp_path / "one", tmp_path / "two"
    stale = (vault / "b.md").read_bytes()
    cli(capsys, vault, one, "rate", "b.md", "--rating", "good", now="2026-11-20T09:00")
    (vault / "b.md").write_bytes(stale)
    old = time.time() - 60
    os.utime(vault / "b.md", (old, old))
    cli(capsys, vault, two, "sync", now="2026-11-20T10:00")
    assert review_count(vault / "b.md") == 1


def test_a_note_ahead_of_the_log_is_left_while_it_settles_then_corrected(tmp_path, capsys):
    """A note holding more reviews than the log, written a moment ago, may be a review whose log
    line is coming: the replay leaves it, and a later command, once the note has settled and no
    such line came, corrects it without any new log line. A note behind the log is corrected
    at once (`test_a_stale_copy_put_back_is_still_corrected`)."""
    vault = make_vault(tmp_path / "vault")
    one, two = tmp_path / "one", tmp_path / "two"
    cli(capsys, vault, one, "rate", "b.md", "--rating", "good", now="2026-11-20T09:00")
    note = vault / "b.md"
    note.write_text(note.read_text().replace("review_count: 1", "review_count: 5"))
    cli(capsys, vault, two, "sync", now="2026-11-20T10:00")
    assert review_count(note) == 5
    old = time.time() - 60
    os.utime(note, (old, old))
    cli(capsys, vault, two, "due", now="2026-11-20T10:00")
    assert review_count(note) == 1
