"""Hunting the history's files as a user's machine leaves them: a stray file in the backups
folder, a file where the review log's folder belongs. Real processes, files compared byte for
byte."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

STUDYAPP = str(Path(sys.executable).with_name("studyapp"))


def studyapp(data: Path, vault: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "TZ": "UTC"}
    env.pop("STUDYAPP_VAULT", None)
    return subprocess.run([STUDYAPP, "--vault", str(vault), "--data-dir", str(data), *args],
                          capture_output=True, text=True, env=env, timeout=120)


def reviewed_vault(tmp_path: Path) -> tuple[Path, Path]:
    vault, data = tmp_path / "vault", tmp_path / "data"
    vault.mkdir()
    (vault / "a.md").write_text("# A\nanswer\n")
    (vault / "b.md").write_text("# B\nanswer\n")
    done = studyapp(data, vault, "rate", "a.md", "--rating", "good", "--now", "2026-03-02T09:00")
    assert done.returncode == 0, done.stderr
    return vault, data


def test_a_backup_named_by_hand_with_an_impossible_date_does_not_stop_every_command(tmp_path):
    """A copy of the database put into backups/ as `manual-20260230-120000.sqlite3` (Feb 30)
    matches the backup name pattern; `datetime.strptime` then raises in `list_backups`, which
    every command runs when it opens the database: `due`, `rate`, `backup list` all stop with
    exit 2 and Python's words "day is out of range for month", naming no file."""
    vault, data = reviewed_vault(tmp_path)
    assert studyapp(data, vault, "backup", "create").returncode == 0
    (data / "backups").mkdir(exist_ok=True)
    shutil.copy(data / "studyapp.sqlite3", data / "backups" / "manual-20260230-120000.sqlite3")

    due = studyapp(data, vault, "due", "--now", "2026-03-02T10:00")
    listing = studyapp(data, vault, "backup", "list")

    assert due.returncode == 0, due.stderr
    assert listing.returncode == 0 and "out of range for month" not in listing.stderr, listing.stderr


def test_a_review_the_log_cannot_hold_changes_nothing_when_a_file_holds_the_log_folders_place(tmp_path):
    """`.studyapp/log` is a file (a sync tool's conflict copy, a stray `>` in a shell) before
    this device's first review. The check before a review (`EventLog.check_writable`) asks
    `own_file.exists()`, False under a file, and finds the vault writable, so the review
    writes the note, then fails on the log ("Not a directory", exit 1): the note says
    reviewed (review_count 1) while the command said error and the history has no review."""
    vault, data = tmp_path / "vault", tmp_path / "data"
    vault.mkdir()
    (vault / "a.md").write_text("# A\nanswer\n")
    assert studyapp(data, vault, "due", "--now", "2026-03-02T09:00").returncode == 0
    log = vault / ".studyapp" / "log"
    shutil.rmtree(log)  # empty: no review yet
    log.write_text("not a folder\n")
    before = (vault / "a.md").read_bytes()

    result = studyapp(data, vault, "rate", "a.md", "--rating", "good", "--now", "2026-03-02T10:00")

    assert result.returncode != 0, result.stdout  # the review cannot be logged: refused...
    assert (vault / "a.md").read_bytes() == before, result.stderr  # ...and changes nothing


def test_a_folder_in_the_review_databases_place_is_named_as_such(tmp_path):
    """The database file replaced by a folder (a sync tool's conflict, a stray `mkdir`): SQLite
    says "unable to open database file" or "disk I/O error", which points at the disk; the
    user is told what is there and what to do."""
    vault, data = reviewed_vault(tmp_path)
    for name in ("studyapp.sqlite3", "studyapp.sqlite3-wal", "studyapp.sqlite3-shm"):
        (data / name).unlink(missing_ok=True)
    (data / "studyapp.sqlite3").mkdir()

    for args in (("due", "--now", "2026-03-02T10:00"), ("backup", "create")):
        result = studyapp(data, vault, *args)
        assert result.returncode == 1, result.stderr
        assert "is a folder, not a database file" in result.stderr and "disk I/O" not in result.stderr, result.stderr


def test_claim_names_the_marker_a_folder_stands_in_for(tmp_path):
    """`data-dir.json` made a folder: `claim` blamed the vault ("is the vault writable?")."""
    vault, data = reviewed_vault(tmp_path)
    (data / "data-dir.json").unlink()
    (data / "data-dir.json").mkdir()

    result = studyapp(data, vault, "claim")

    assert result.returncode == 1
    assert "data-dir.json" in result.stderr and "vault writable" not in result.stderr, result.stderr


def test_a_restore_holds_the_writer_lock_until_the_cards_follow_the_notes(tmp_path, monkeypatch, capsys):
    """`rebuild` holds the writer lock while the cards catch up with the notes; `backup restore`
    did the same work without it, so a review another studyapp wrote meanwhile could be
    overwritten. Checked from inside the catching up: the lock cannot be taken then."""
    from studyapp import rebuild
    from studyapp.cli import main

    vault, data = reviewed_vault(tmp_path)
    assert studyapp(data, vault, "backup", "create").returncode == 0
    caught_up = rebuild.rebuild_from_notes
    free_meanwhile = []
    probe = ("import fcntl, os, sys\nfd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT)\n"
             "try:\n    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)\nexcept BlockingIOError:\n"
             "    print('held')\nelse:\n    print('free')\n")

    def watched(ctx):  # another process tries the lock, as another studyapp's review would
        answer = subprocess.run([sys.executable, "-c", probe, str(ctx.paths.writer_lock_file)],
                                capture_output=True, text=True, timeout=60).stdout.strip()
        free_meanwhile.append(answer == "free")
        return caught_up(ctx)

    monkeypatch.setattr(rebuild, "rebuild_from_notes", watched)
    assert main(["backup", "restore", "--vault", str(vault), "--data-dir", str(data)]) == 0, capsys.readouterr()
    assert free_meanwhile == [False]
