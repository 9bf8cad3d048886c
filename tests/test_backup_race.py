"""Commands started together, with no backup yet: one of them takes the automatic backup, the
others find it being taken and say nothing; no process removes or overwrites another's copy."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from studyapp.backups import (
    BackupKind,
    list_backups,
    take_backup,
    take_backup_if_due,
)
from studyapp.store import Store

ROOT = Path(__file__).resolve().parent.parent
NOW = datetime(2026, 11, 20, 10, 0, tzinfo=timezone.utc)
STAMP = "20261120-100000"


@pytest.fixture
def db(tmp_path) -> Path:
    db = tmp_path / "studyapp.sqlite3"
    with Store(db) as store:
        store.add_note("a.md", "h", "A", NOW)
    return db


def test_a_copy_another_process_is_writing_is_left_alone(db, tmp_path):
    folder = tmp_path / "backups"
    folder.mkdir()
    theirs = folder / f".auto-{STAMP}.sqlite3.partial"  # the name every process used to write
    theirs.write_bytes(b"another process's copy, half written")
    assert take_backup_if_due(db, folder, NOW) is not None
    assert theirs.read_bytes() == b"another process's copy, half written"


def test_a_backup_given_its_name_meanwhile_is_not_overwritten(db, tmp_path, monkeypatch):
    folder = tmp_path / "backups"
    theirs = folder / f"manual-{STAMP}.sqlite3"
    real_fsync = os.fsync

    def another_process_finishes_first(fd):
        if not theirs.exists():
            theirs.write_bytes(b"theirs")
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", another_process_finishes_first)
    ours = take_backup(db, folder, NOW, BackupKind.MANUAL)
    monkeypatch.undo()
    assert theirs.read_bytes() == b"theirs"
    assert ours.path.name == f"manual-{STAMP}-2.sqlite3"
    assert [p.name for p in folder.iterdir() if p.name.endswith(".partial")] == []


HELD_BACKUP = """
import sys, time
from datetime import datetime, timezone
from pathlib import Path
from studyapp import backups

real = backups.take_backup
def held(*args, **kwargs):
    Path(sys.argv[3]).touch()  # in the middle of taking it
    deadline = time.monotonic() + 60
    while not Path(sys.argv[3] + ".go").exists() and time.monotonic() < deadline:
        time.sleep(0.01)
    return real(*args, **kwargs)
backups.take_backup = held
now = datetime(2026, 11, 20, 10, 0, tzinfo=timezone.utc)
assert backups.take_backup_if_due(Path(sys.argv[1]), Path(sys.argv[2]), now) is not None
"""


def test_only_one_process_takes_the_automatic_backup(db, tmp_path):
    folder, marker = tmp_path / "backups", tmp_path / "taking"
    taker = subprocess.Popen([sys.executable, "-c", HELD_BACKUP, str(db), str(folder),
                              str(marker)], env=dict(os.environ, PYTHONPATH=str(ROOT)))
    try:
        deadline = time.monotonic() + 30
        while not marker.exists():
            assert time.monotonic() < deadline and taker.poll() is None, "the taker never began"
            time.sleep(0.01)
        assert take_backup_if_due(db, folder, NOW + timedelta(seconds=1)) is None
        assert list_backups(folder) == []
    finally:
        Path(f"{marker}.go").touch()
        assert taker.wait(timeout=60) == 0
    assert [b.kind for b in list_backups(folder)] == [BackupKind.AUTO]
    assert take_backup_if_due(db, folder, NOW + timedelta(seconds=2)) is None  # taken: not due


def test_a_copy_left_by_a_killed_process_is_removed_later(db, tmp_path):
    folder = tmp_path / "backups"
    folder.mkdir()
    left = folder / ".auto-20261101-100000.4242-abcd.partial"
    left.write_bytes(b"killed half way")
    old = time.time() - 2 * 3600
    os.utime(left, (old, old))
    assert take_backup_if_due(db, folder, NOW) is not None
    assert not left.exists()
