"""The review history's safety: OS and database failures reach the user as one clear line,
a lost database is noticed and can be brought back (backups, or the notes' own review keys),
and a second data dir on the same vault is reported.

Failures are injected in-process where that is the only way (a full disk inside SQLite), and
produced for real where the kernel allows it: a tiny tmpfs in a private mount namespace for a
full disk, and a user namespace without capabilities so that even root obeys file modes.
"""

from __future__ import annotations

import errno
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from studyapp.cli import main
from studyapp.errors import UserError
from studyapp.store import Store, StoreError

ROOT = Path(__file__).resolve().parent.parent
NOW = "2026-11-20T10:00"

REVIEWED = """---
title: Reviewed before
review_count: 2
last_reviewed: 2026-11-01
next_review: 2026-11-10
difficulty: medium
---
# Why scale by sqrt(d_k)

Dot products grow with the dimension.
"""

NEW = """---
title: Never reviewed
review_count: 0
last_reviewed: null
next_review: 2026-11-01
---
# Causal mask

Upper triangle set to -inf.
"""


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    root = tmp_path / "vault"
    root.mkdir()
    (root / "a.md").write_text(REVIEWED)
    (root / "b.md").write_text(NEW)
    return root


@pytest.fixture
def data(tmp_path: Path) -> Path:
    return tmp_path / "data"


def cli(capsys, vault: Path, data: Path, *args: str, now: str = NOW) -> tuple[int, str, str]:
    """Run one command in-process; returns (exit code, stdout, stderr)."""
    capsys.readouterr()
    code = main([*args, "--vault", str(vault), "--data-dir", str(data), "--now", now])
    out, err = capsys.readouterr()
    return code, out, err


def assert_one_clear_line(err: str, *words: str) -> None:
    """stderr is one `studyapp: error:` line (no traceback) containing every word."""
    lines = err.strip().splitlines()
    assert "Traceback" not in err
    errors = [line for line in lines if line.startswith("studyapp: error:")]
    assert len(errors) == 1, err
    for word in words:
        assert word.lower() in errors[0].lower(), err


def review_rows(data: Path) -> int:
    conn = sqlite3.connect(data / "studyapp.sqlite3")
    try:
        return conn.execute("SELECT COUNT(*) FROM reviews").fetchone()[0]
    finally:
        conn.close()


def journal_rows(data: Path) -> int:
    conn = sqlite3.connect(data / "studyapp.sqlite3")
    try:
        return conn.execute("SELECT COUNT(*) FROM journal").fetchone()[0]
    finally:
        conn.close()


# -- real processes, real kernels ---------------------------------------------------------


def _namespaces_work(*flags: str) -> bool:
    if shutil.which("unshare") is None:
        return False
    try:
        return subprocess.run(["unshare", *flags, "true"], capture_output=True,
                              timeout=30, check=False).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


MOUNTS = _namespaces_work("-rm")
"""A private mount namespace (`unshare -rm`): tmpfs mounts that vanish with the process."""
NO_CAPABILITIES = _namespaces_work("--user")
"""A user namespace without a root mapping: even root then obeys file modes."""


def studyapp_command(vault: Path, data: Path, *args: str) -> list[str]:
    return [sys.executable, "-m", "studyapp", *args, "--vault", str(vault),
            "--data-dir", str(data), "--now", NOW]


def run_real(command: list[str], *, prefix: list[str] | None = None,
             shell_setup: str | None = None) -> subprocess.CompletedProcess:
    """Run studyapp in a real process, optionally after `shell_setup` inside a namespace."""
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    env.pop("STUDYAPP_DATA_DIR", None)
    if shell_setup is not None:
        quoted = " ".join(f"'{part}'" for part in command)
        command = ["sh", "-c", f"set -e\n{shell_setup}\nexec {quoted}"]
    return subprocess.run([*(prefix or []), *command], capture_output=True, text=True,
                          env=env, timeout=120, check=False)


def fill_tmpfs(target: Path, stage: Path) -> str:
    """Shell lines: mount a small tmpfs on `target`, copy `stage` in, then fill it up."""
    return (f"mount -t tmpfs -o size=1m tmpfs '{target}'\n"
            f"cp -a '{stage}'/. '{target}'/\n"
            f"dd if=/dev/zero of='{target}/.filler' bs=4k 2>/dev/null || true")


@pytest.mark.skipif(not MOUNTS, reason="needs unshare -rm (a private mount namespace)")
def test_a_full_disk_under_the_data_dir_is_one_line_and_changes_nothing(vault, data, capsys):
    assert cli(capsys, vault, data, "rate", "b.md", "--rating", "good")[0] == 0
    before = (vault / "a.md").read_bytes()
    stage = data.parent / "stage"
    shutil.copytree(data, stage)

    done = run_real(studyapp_command(vault, data, "rate", "a.md", "--rating", "good"),
                    prefix=["unshare", "-rm"], shell_setup=fill_tmpfs(data, stage))

    assert done.returncode == 1, done.stderr
    assert_one_clear_line(done.stderr, "space")
    assert (vault / "a.md").read_bytes() == before


@pytest.mark.skipif(not MOUNTS, reason="needs unshare -rm (a private mount namespace)")
def test_a_full_disk_under_the_vault_is_one_line_and_changes_nothing(vault, data, capsys):
    assert cli(capsys, vault, data, "due")[0] == 0
    stage = vault.parent / "stage"
    shutil.copytree(vault, stage)
    before = (vault / "a.md").read_bytes()

    done = run_real(studyapp_command(vault, data, "rate", "a.md", "--rating", "good"),
                    prefix=["unshare", "-rm"], shell_setup=fill_tmpfs(vault, stage))

    assert done.returncode == 1, done.stderr
    assert_one_clear_line(done.stderr, "space")
    assert (vault / "a.md").read_bytes() == before  # the tmpfs is gone: the real file is untouched
    assert review_rows(data) == 0 and journal_rows(data) == 0


@pytest.mark.skipif(not NO_CAPABILITIES, reason="needs unshare --user")
def test_a_read_only_database_file_is_one_line(vault, data, capsys):
    assert cli(capsys, vault, data, "rate", "b.md", "--rating", "good")[0] == 0
    Store(data / "studyapp.sqlite3").close()  # checkpointed: no -wal left to write to
    for name in ("studyapp.sqlite3-wal", "studyapp.sqlite3-shm"):
        (data / name).unlink(missing_ok=True)
    (data / "studyapp.sqlite3").chmod(0o444)
    before = (vault / "a.md").read_bytes()

    done = run_real(studyapp_command(vault, data, "rate", "a.md", "--rating", "good"),
                    prefix=["unshare", "--user"])

    assert done.returncode == 1, done.stderr
    assert_one_clear_line(done.stderr, "read-only")
    assert (vault / "a.md").read_bytes() == before


@pytest.mark.skipif(not NO_CAPABILITIES, reason="needs unshare --user")
def test_a_read_only_data_dir_is_one_line(vault, data, capsys):
    data.mkdir()
    data.chmod(0o555)
    try:
        done = run_real(studyapp_command(vault, data, "rate", "a.md", "--rating", "good"),
                        prefix=["unshare", "--user"])
    finally:
        data.chmod(0o755)
    assert done.returncode == 1, done.stderr
    assert_one_clear_line(done.stderr, str(data))
    assert (vault / "a.md").read_text() == REVIEWED


# -- injected failures --------------------------------------------------------------------


def test_disk_full_while_writing_the_note_is_one_line(vault, data, capsys, monkeypatch):
    import studyapp.atomic

    def full(fd, data):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(studyapp.atomic, "_write_all", full)
    code, _, err = cli(capsys, vault, data, "rate", "a.md", "--rating", "good")
    assert code == 1
    assert_one_clear_line(err, "no space left")
    assert (vault / "a.md").read_text() == REVIEWED
    assert review_rows(data) == 0 and journal_rows(data) == 0


def test_disk_full_inside_the_database_is_one_line(vault, data, capsys, monkeypatch):
    def full(self, *args, **kwargs):
        raise sqlite3.OperationalError("database or disk is full")

    monkeypatch.setattr(Store, "add_journal", full)
    code, _, err = cli(capsys, vault, data, "rate", "a.md", "--rating", "good")
    assert code == 1
    assert_one_clear_line(err, "full", str(data))
    assert (vault / "a.md").read_text() == REVIEWED


def test_a_failed_commit_is_a_store_error_and_the_connection_stays_usable(tmp_path):
    from datetime import datetime, timezone

    store = Store(tmp_path / "db.sqlite3")
    real = store.conn
    failures = ["COMMIT"]

    def execute(sql, *args):
        if failures and sql == failures[0]:
            failures.pop()
            raise sqlite3.OperationalError("database or disk is full")
        return real.execute(sql, *args)

    store.conn = _ConnectionProxy(real, execute)
    now = datetime.now(timezone.utc)
    with pytest.raises(StoreError, match="full"):
        store.save_params([1.0], now, None, None, 0)
    assert not real.in_transaction
    store.save_params([2.0], now, None, None, 0)
    assert store.latest_params() == [2.0]
    store.close()


class _ConnectionProxy:
    """A sqlite3 connection whose `execute` is replaced (the real one's is read-only)."""

    def __init__(self, conn: sqlite3.Connection, execute):
        self._conn = conn
        self.execute = execute

    def __getattr__(self, name):
        return getattr(self._conn, name)


@pytest.mark.parametrize("damage", ["garbage", "truncated"])
def test_a_damaged_database_is_one_line_that_points_to_the_backups(vault, data, capsys, damage):
    assert cli(capsys, vault, data, "rate", "b.md", "--rating", "good")[0] == 0
    db = data / "studyapp.sqlite3"
    Store(db).close()
    for name in ("studyapp.sqlite3-wal", "studyapp.sqlite3-shm"):
        (data / name).unlink(missing_ok=True)
    raw = db.read_bytes()
    db.write_bytes(os.urandom(len(raw)) if damage == "garbage" else raw[: len(raw) // 3])

    for command in (["due"], ["rate", "a.md", "--rating", "good"], ["stats"]):
        code, _, err = cli(capsys, vault, data, *command)
        assert code == 1, (command, err)
        assert_one_clear_line(err, "damaged", "studyapp backup restore")
    assert (vault / "a.md").read_text() == REVIEWED


def test_a_newer_database_is_one_line(vault, data, capsys):
    from studyapp.store import SCHEMA_VERSION

    data.mkdir()
    conn = sqlite3.connect(data / "studyapp.sqlite3")
    conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 5}")
    conn.close()
    code, _, err = cli(capsys, vault, data, "due")
    assert code == 1
    assert_one_clear_line(err, "newer studyapp")


def test_store_error_is_a_user_error():
    assert issubclass(StoreError, UserError)


def test_the_tui_shows_an_os_error_as_one_clear_notification(tmp_path):
    import asyncio

    from studyapp.context import build_context
    from studyapp.tui.app import StudyApp
    from tests.tui.fake_study import FakeStudy

    (tmp_path / "vault").mkdir()
    ctx = build_context(vault=str(tmp_path / "vault"), data_dir=str(tmp_path / "data"),
                        now=NOW, seed=False)

    async def scenario() -> list[str]:
        app = StudyApp(ctx, study=FakeStudy(tmp_path / "workspace"))
        async with app.run_test(size=(80, 24)) as pilot:
            await pilot.pause()
            app.report_error(OSError(errno.ENOSPC, os.strerror(errno.ENOSPC),
                                     str(tmp_path / "vault" / ".a.md.1234abcd.studyapp-tmp")))
            app.report_error(sqlite3.OperationalError("database or disk is full"))
            await pilot.pause()
            return [n.message for n in app._notifications]

    messages = asyncio.run(scenario())
    assert any("no space left" in m.lower() and "a.md" in m and "studyapp-tmp" not in m
               for m in messages), messages
    assert any("full" in m and "database" in m and str(ctx.paths.database_file) in m
               for m in messages), messages


# -- the history is never silently lost ---------------------------------------------------


def warnings_of(err: str) -> list[str]:
    return [line for line in err.splitlines() if line.startswith("studyapp: warning:")]


def history_warning(err: str) -> str | None:
    found = [line for line in warnings_of(err) if "review history" in line]
    return found[0] if found else None


def reviewed_twice(capsys, vault: Path, data: Path) -> None:
    """Two reviews on different days, then a command that opens the database again."""
    assert cli(capsys, vault, data, "rate", "a.md", "--rating", "good")[0] == 0
    assert cli(capsys, vault, data, "rate", "b.md", "--rating", "easy",
               now="2026-11-21T10:00")[0] == 0
    assert cli(capsys, vault, data, "due", now="2026-11-21T11:00")[0] == 0


def remove_database(data: Path) -> None:
    """Lose the database and the review log with it: with the log still there, the database
    is a cache rebuilt from it (tests/test_history*.py), and nothing is lost."""
    for name in ("studyapp.sqlite3", "studyapp.sqlite3-wal", "studyapp.sqlite3-shm"):
        (data / name).unlink(missing_ok=True)
    remove_review_log(data)


def remove_review_log(data: Path) -> None:
    shutil.rmtree(data.parent / "vault" / ".studyapp" / "log", ignore_errors=True)
    shutil.rmtree(data / "log", ignore_errors=True)


@pytest.fixture
def frequent_backups(monkeypatch):
    """Every command that opens a changed database backs it up (the real interval is hours)."""
    from datetime import timedelta

    monkeypatch.setattr("studyapp.backups.BACKUP_EVERY", timedelta(0))


def test_a_first_run_on_a_vault_the_old_tool_reviewed_is_not_a_warning(vault, data, capsys):
    code, _, err = cli(capsys, vault, data, "due")
    assert code == 0 and warnings_of(err) == []
    code, _, err = cli(capsys, vault, data, "rate", "a.md", "--rating", "good")
    assert code == 0 and warnings_of(err) == []
    code, _, err = cli(capsys, vault, data, "due")
    assert code == 0 and warnings_of(err) == []


def test_undoing_every_review_is_not_a_lost_history(vault, data, capsys):
    assert cli(capsys, vault, data, "rate", "b.md", "--rating", "good")[0] == 0
    assert cli(capsys, vault, data, "undo")[0] == 0
    code, _, err = cli(capsys, vault, data, "due")
    assert code == 0 and warnings_of(err) == []


@pytest.mark.parametrize("how", ["deleted", "emptied", "replaced"])
def test_a_lost_database_is_reported_until_the_user_acts(vault, data, capsys, how):
    reviewed_twice(capsys, vault, data)
    remove_database(data)
    if how == "emptied":
        (data / "studyapp.sqlite3").write_bytes(b"")
    elif how == "replaced":
        other = data.parent / "other"  # same frozen clock: only the database id differs
        other_vault = data.parent / "other-vault"  # its own vault: its log is not this one's
        shutil.copytree(vault, other_vault)
        assert cli(capsys, other_vault, other, "rate", "a.md", "--rating", "good")[0] == 0
        shutil.copy(other / "studyapp.sqlite3", data / "studyapp.sqlite3")

    for _ in range(2):  # told every time, not once
        code, _, err = cli(capsys, vault, data, "due")
        assert code == 0
        warning = history_warning(err)
        assert warning is not None, err
        assert "2 reviews" in warning
        assert "studyapp backup restore" in warning and "studyapp rebuild" in warning


def test_the_lost_history_is_noticed_by_a_command_that_writes(vault, data, capsys):
    reviewed_twice(capsys, vault, data)
    remove_database(data)
    code, _, err = cli(capsys, vault, data, "rate", "a.md", "--rating", "hard",
                       now="2026-11-22T10:00")
    assert code == 0 and history_warning(err) is not None
    code, _, err = cli(capsys, vault, data, "due", now="2026-11-22T11:00")
    assert history_warning(err) is not None  # the new review does not hide the old loss


def test_backups_are_taken_on_open_and_restore_brings_the_history_back(
        vault, data, capsys, frequent_backups):
    reviewed_twice(capsys, vault, data)
    code, out, _ = cli(capsys, vault, data, "backup", "list")
    assert code == 0 and "2 reviews" in out
    remove_database(data)

    code, out, err = cli(capsys, vault, data, "backup", "restore")
    assert code == 0, err
    assert "2 reviews" in out
    assert review_rows(data) == 2
    code, _, err = cli(capsys, vault, data, "due", now="2026-11-21T12:00")
    assert code == 0 and warnings_of(err) == []


def test_restore_replaces_a_damaged_database_and_keeps_the_damaged_file(
        vault, data, capsys, frequent_backups):
    reviewed_twice(capsys, vault, data)
    remove_database(data)
    (data / "studyapp.sqlite3").write_bytes(b"not a database at all" * 100)
    assert cli(capsys, vault, data, "due")[0] == 1

    code, out, err = cli(capsys, vault, data, "backup", "restore")
    assert code == 0, err
    assert review_rows(data) == 2
    kept = [p for p in (data / "backups").iterdir() if p.read_bytes().startswith(b"not a database")]
    assert len(kept) == 1 and kept[0].name in out


def test_a_damaged_backup_is_named_as_the_backup_not_the_review_database(
        vault, data, capsys, frequent_backups):
    """A backup that is no database was reported as "the review database is damaged ...
    `studyapp backup restore` brings back the newest backup", by `backup list` and by restoring
    it: advice to restore the very file that failed."""
    reviewed_twice(capsys, vault, data)
    bad = data / "backups" / "manual-20261101-000000.sqlite3"
    bad.write_bytes(b"not a database at all" * 100)
    code, out, _ = cli(capsys, vault, data, "backup", "list")
    line = next(line for line in out.splitlines() if line.startswith(bad.name))
    assert code == 0 and f"the backup {bad.name} is damaged" in line and "review database" not in line, line
    code, _, err = cli(capsys, vault, data, "backup", "restore", bad.name)
    assert code != 0 and f"the backup {bad.name} is damaged" in err and "review database" not in err, err


def test_restore_keeps_the_current_database_as_a_backup_first(
        vault, data, capsys, frequent_backups):
    reviewed_twice(capsys, vault, data)
    assert cli(capsys, vault, data, "rate", "a.md", "--rating", "good",
               now="2026-11-25T10:00")[0] == 0
    assert review_rows(data) == 3
    remove_review_log(data)  # with the log, the log is the history: a restore is for its loss
    assert cli(capsys, vault, data, "backup", "restore")[0] == 0
    assert review_rows(data) == 2
    _, out, _ = cli(capsys, vault, data, "backup", "list")
    assert "3 reviews" in out  # the state before the restore is one restore away


def test_after_a_restore_notes_reviewed_since_the_backup_follow_their_keys(
        vault, data, capsys, frequent_backups):
    from studyapp.context import build_context
    from studyapp.reviews import ReviewService

    reviewed_twice(capsys, vault, data)
    assert cli(capsys, vault, data, "rate", "a.md", "--rating", "easy",
               now="2026-12-20T10:00")[0] == 0
    assert cli(capsys, vault, data, "backup", "restore", now="2026-12-20T11:00")[0] == 0
    ctx = build_context(vault=str(vault), data_dir=str(data), now="2026-12-20T12:00")
    with ReviewService(ctx) as service:
        snap = service.load()
        cards = {item.note.path: item.card for item in service.note_cards(snap.notes)}
        note = {n.path: n for n in snap.notes}["a.md"]
    assert cards["a.md"].last_review.astimezone().date() == note.last_reviewed
    assert cards["a.md"].due.astimezone().date() == note.next_review


def test_backups_are_rotated_and_taken_at_most_once_per_interval(tmp_path):
    from datetime import datetime, timedelta, timezone

    from studyapp.backups import (
        BACKUP_EVERY,
        BACKUPS_KEPT,
        list_backups,
        take_backup_if_due,
    )

    db = tmp_path / "studyapp.sqlite3"
    with Store(db) as store:
        store.add_note("a.md", "h", "A", datetime(2026, 1, 1, tzinfo=timezone.utc))
    folder = tmp_path / "backups"
    start = datetime.now(timezone.utc) + timedelta(minutes=1)
    assert take_backup_if_due(db, folder, start) is not None
    assert take_backup_if_due(db, folder, start + BACKUP_EVERY / 2) is None
    for i in range(1, BACKUPS_KEPT + 3):
        when = start + i * BACKUP_EVERY
        # the database changed since the last backup (the backups' clock here runs ahead)
        os.utime(db, (when.timestamp() - 1, when.timestamp() - 1))
        assert take_backup_if_due(db, folder, when) is not None
    backups = list_backups(folder)
    assert len(backups) == BACKUPS_KEPT
    assert backups[0].taken_at > backups[-1].taken_at  # newest first


def test_an_unchanged_database_is_not_backed_up_again(tmp_path):
    from datetime import datetime, timezone

    from studyapp.backups import BACKUP_EVERY, take_backup_if_due

    db = tmp_path / "studyapp.sqlite3"
    with Store(db) as store:
        store.add_note("a.md", "h", "A", datetime(2026, 1, 1, tzinfo=timezone.utc))
    folder = tmp_path / "backups"
    now = datetime.now(timezone.utc)
    assert take_backup_if_due(db, folder, now) is not None
    assert take_backup_if_due(db, folder, now + 3 * BACKUP_EVERY) is None


def test_no_automatic_backup_while_the_history_is_lost(vault, data, capsys, frequent_backups):
    reviewed_twice(capsys, vault, data)
    before = sorted(p.name for p in (data / "backups").iterdir())
    remove_database(data)
    assert cli(capsys, vault, data, "rate", "a.md", "--rating", "hard")[0] == 0
    assert cli(capsys, vault, data, "due")[0] == 0
    assert sorted(p.name for p in (data / "backups").iterdir()) == before


def test_rebuild_takes_card_state_from_the_notes_and_ends_the_warning(vault, data, capsys):
    from studyapp.context import build_context
    from studyapp.reviews import ReviewService

    reviewed_twice(capsys, vault, data)
    shutil.rmtree(data / "backups")
    remove_database(data)
    code, _, err = cli(capsys, vault, data, "due", now="2026-11-21T12:00")
    assert "no backup" in history_warning(err)

    code, out, err = cli(capsys, vault, data, "rebuild", now="2026-11-21T12:00")
    assert code == 0, err
    assert "2 notes" in out
    code, _, err = cli(capsys, vault, data, "due", now="2026-11-21T12:00")
    assert warnings_of(err) == []
    ctx = build_context(vault=str(vault), data_dir=str(data), now="2026-11-21T12:00")
    with ReviewService(ctx) as service:
        snap = service.load()
        for note in snap.notes:
            row = service.store.note_by_path(note.path)
            card = service.store.card(row.key)
            assert card.due.astimezone().date() == note.next_review
            assert card.last_review.astimezone().date() == note.last_reviewed


# -- one vault, one data dir --------------------------------------------------------------


def test_a_second_data_dir_on_the_same_vault_is_reported(vault, data, capsys, monkeypatch):
    monkeypatch.setattr("studyapp.doctor.torch_report", lambda: "stubbed in tests")
    # With the log kept in each data dir, two data dirs share nothing and are warned; with
    # the log in the vault (the default) they are two devices (tests/test_history_sync.py).
    second = data.parent / "second"
    for folder in (data, second):
        folder.mkdir(exist_ok=True)
        (folder / "config.toml").write_text('history_log = "data-dir"\n')
    reviewed_twice(capsys, vault, data)

    code, _, err = cli(capsys, vault, second, "due")
    assert code == 0
    found = [w for w in warnings_of(err) if "another data dir" in w]
    assert found and str(data) in found[0] and "studyapp claim" in found[0], err
    code, out, _ = cli(capsys, vault, second, "doctor")
    assert "another data dir" in out and str(data) in out

    code, _, err = cli(capsys, vault, data, "due")  # the owner is not warned
    assert warnings_of(err) == []

    assert cli(capsys, vault, second, "claim")[0] == 0
    code, _, err = cli(capsys, vault, second, "due")
    assert warnings_of(err) == []
    code, _, err = cli(capsys, vault, data, "due")
    assert any("another data dir" in w and str(second) in w for w in warnings_of(err)), err


def test_the_vault_marker_lives_in_the_vaults_studyapp_folder_and_is_not_a_note(
        vault, data, capsys):
    reviewed_twice(capsys, vault, data)
    assert (vault / ".studyapp").is_dir()
    _, out, _ = cli(capsys, vault, data, "due", "--json")
    import json

    notes = [row for row in json.loads(out) if row["kind"] == "note"]  # due drills have no path
    assert all(not row["path"].startswith(".studyapp") for row in notes)


def test_a_read_only_vault_is_never_a_reason_to_fail(vault, data, capsys, monkeypatch):
    import studyapp.markers

    def refuse(*args, **kwargs):
        raise PermissionError(errno.EACCES, "Permission denied", str(vault / ".studyapp"))

    monkeypatch.setattr(studyapp.markers, "atomic_write_bytes", refuse)
    reviewed_twice(capsys, vault, data)  # the markers cannot be written: the commands still work


# -- doctor --------------------------------------------------------------------------------


def test_doctor_reports_the_database_state(vault, data, capsys, monkeypatch):
    monkeypatch.setattr("studyapp.doctor.torch_report", lambda: "stubbed in tests")
    code, out, _ = cli(capsys, vault, data, "doctor")
    assert code == 0 and "database" in out and "none yet" in out

    reviewed_twice(capsys, vault, data)
    code, out, _ = cli(capsys, vault, data, "doctor")
    assert code == 0
    assert "database   ok: 2 reviews" in out
    assert "backups    1" in out

    remove_database(data)
    code, out, _ = cli(capsys, vault, data, "doctor")
    assert code == 1
    assert "database   lost" in out and "studyapp backup restore" in out

    (data / "studyapp.sqlite3").write_bytes(b"garbage" * 1000)
    code, out, _ = cli(capsys, vault, data, "doctor")
    assert code == 1 and "damaged" in out


# -- the app tells it too ------------------------------------------------------------------


def test_the_app_is_started_with_the_history_notices(vault, data, capsys, monkeypatch):
    import studyapp.tui.app
    from studyapp.context import build_context

    reviewed_twice(capsys, vault, data)
    remove_database(data)
    seen = {}

    def fake_run_app(ctx, notices=()):
        seen["notices"] = list(notices)
        return 0

    monkeypatch.setattr(studyapp.tui.app, "run_app", fake_run_app)
    from studyapp.commands import open_app

    assert open_app(build_context(vault=str(vault), data_dir=str(data), now=NOW)) == 0
    assert any("review history" in n.text and "studyapp rebuild" in n.text and n.warning
               for n in seen["notices"])


def test_the_app_shows_warnings_as_warnings_and_notes_as_information(tmp_path):
    import asyncio

    from studyapp.context import build_context
    from studyapp.history_guard import Notice
    from studyapp.tui.app import StudyApp
    from tests.tui.fake_study import FakeStudy

    (tmp_path / "vault").mkdir()
    ctx = build_context(vault=str(tmp_path / "vault"), data_dir=str(tmp_path / "data"),
                        now=NOW, seed=False)

    async def scenario():
        app = StudyApp(ctx, study=FakeStudy(tmp_path / "workspace"),
                       notices=[Notice("the review history in X is gone"),
                                Notice("the review history is kept in the vault", warning=False)])
        async with app.run_test(size=(80, 24)) as pilot:
            await pilot.pause()
            return [(n.message, n.severity) for n in app._notifications]

    shown = asyncio.run(scenario())
    assert ("the review history in X is gone", "warning") in shown
    assert ("the review history is kept in the vault", "information") in shown


def test_rebuild_sets_a_damaged_database_aside_when_no_backup_can_help(vault, data, capsys):
    reviewed_twice(capsys, vault, data)
    shutil.rmtree(data / "backups")
    remove_database(data)
    (data / "studyapp.sqlite3").write_bytes(b"garbage" * 1000)
    code, _, err = cli(capsys, vault, data, "due")
    assert code == 1 and "studyapp rebuild" in err

    code, out, err = cli(capsys, vault, data, "rebuild", now="2026-11-21T12:00")
    assert code == 0, err
    kept = list((data / "backups").glob("damaged-*"))
    assert len(kept) == 1 and kept[0].read_bytes() == b"garbage" * 1000
    assert str(kept[0]) in out
    code, _, err = cli(capsys, vault, data, "due", now="2026-11-21T12:00")
    assert code == 0 and warnings_of(err) == []


def test_a_restore_reaches_a_connection_already_open_as_the_app_keeps_one(
        vault, data, capsys, frequent_backups):
    reviewed_twice(capsys, vault, data)
    assert cli(capsys, vault, data, "rate", "a.md", "--rating", "good",
               now="2026-11-25T10:00")[0] == 0
    with Store(data / "studyapp.sqlite3") as open_in_the_app:
        assert open_in_the_app.review_count() == 3
        remove_review_log(data)
        assert cli(capsys, vault, data, "backup", "restore")[0] == 0
        assert open_in_the_app.review_count() == 2


def test_a_deleted_data_dir_is_noticed_through_the_vault(vault, data, capsys):
    reviewed_twice(capsys, vault, data)
    shutil.rmtree(data)
    remove_review_log(data)
    code, _, err = cli(capsys, vault, data, "due")
    assert code == 0
    found = [w for w in warnings_of(err) if "data dir" in w]
    assert found and "recreated" in found[0] and "studyapp claim" in found[0], err
    assert "studyapp rebuild" in found[0]


def test_the_app_on_a_damaged_database_says_so_in_one_notification(vault, data, capsys, monkeypatch):
    import asyncio

    from studyapp.context import build_context
    from studyapp.tui.app import StudyApp

    monkeypatch.setattr(StudyApp, "start_grader_early", False)  # no worker (torch) for a test of the notes' store
    assert cli(capsys, vault, data, "rate", "b.md", "--rating", "good")[0] == 0
    remove_database(data)
    (data / "studyapp.sqlite3").write_bytes(b"garbage" * 1000)
    ctx = build_context(vault=str(vault), data_dir=str(data), now=NOW, seed=False)

    async def scenario():
        app = StudyApp(ctx)
        async with app.run_test(size=(80, 24)) as pilot:
            for _ in range(3):
                await pilot.pause()
                await app.workers.wait_for_complete()
            await pilot.pause()
            return [(n.message, n.severity) for n in app._notifications]

    shown = asyncio.run(scenario())
    errors = [message for message, severity in shown if severity == "error"]
    assert len(errors) == 1 and "damaged" in errors[0] and "studyapp backup restore" in errors[0]
    assert "\n" not in errors[0] and "Traceback" not in errors[0]


def test_doctor_finds_notes_ahead_of_an_older_copy_put_back_by_hand(
        vault, data, capsys, monkeypatch):
    monkeypatch.setattr("studyapp.doctor.torch_report", lambda: "stubbed in tests")
    assert cli(capsys, vault, data, "rate", "a.md", "--rating", "good")[0] == 0
    assert cli(capsys, vault, data, "backup", "create")[0] == 0
    assert cli(capsys, vault, data, "rate", "a.md", "--rating", "good",
               now="2026-12-30T10:00")[0] == 0
    (copy,) = (data / "backups").glob("manual-*")
    remove_database(data)
    shutil.copy(copy, data / "studyapp.sqlite3")  # the same database, an older state of it

    code, out, _ = cli(capsys, vault, data, "doctor", now="2026-12-30T11:00")
    assert code == 1
    assert "1 note records a review the database lacks (a.md)" in out
    assert "studyapp rebuild" in out

    assert cli(capsys, vault, data, "rebuild", now="2026-12-30T11:00")[0] == 0
    code, out, _ = cli(capsys, vault, data, "doctor", now="2026-12-30T11:00")
    assert code == 0 and "the database lacks" not in out


def test_the_history_modules_import_neither_textual_nor_torch():
    code = ("import sys, studyapp.backups, studyapp.markers, studyapp.history_guard, "
            "studyapp.rebuild, studyapp.commands.history; "
            "print(sorted(m for m in ('torch', 'textual') if m in sys.modules))")
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         check=False)
    assert out.stdout.strip() == "[]", out.stderr
