"""Copies of the review database: taken automatically when a command opens it (at most once
per `BACKUP_EVERY`, and only when it changed; the newest `BACKUPS_KEPT` are kept, as Anki
keeps its own), on demand, and before every restore.

Copies are made with SQLite's online backup API, so one taken while another process writes is
still a consistent database. Backup times are the real clock, never `--now`: they are facts
about files, not about study days.
"""

from __future__ import annotations

import os
import re
import sqlite3
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from enum import Enum
from pathlib import Path

from studyapp.store import (
    SCHEMA_VERSION,
    StoreError,
    StoreProblem,
    newer_schema_error,
    store_error,
)
from studyapp.store_errors import ForeignDatabase, foreign_tables

BACKUP_EVERY = timedelta(hours=6)
"""Least time between two automatic backups."""
BACKUPS_KEPT = 12
"""Automatic backups kept; older ones are deleted. Manual and pre-restore copies stay."""


class BackupKind(Enum):
    """Why a copy exists; only automatic ones are rotated away."""

    AUTO = "auto"
    MANUAL = "manual"
    BEFORE_RESTORE = "before-restore"
    OTHER_VAULT = "other-vault"
    """The database of the vault this data dir served before another (`vault_binding`)."""


_NAME = re.compile(
    r"^(?P<kind>auto|manual|before-restore|other-vault)-(?P<stamp>\d{8}-\d{6})(?:-(?P<n>\d+))?\.sqlite3$")
_STAMP = "%Y%m%d-%H%M%S"


@dataclass(frozen=True)
class Backup:
    """One copy of the database in the backups folder."""

    path: Path
    kind: BackupKind
    taken_at: datetime
    """When it was taken (UTC, to the second)."""

    @property
    def name(self) -> str:
        return self.path.name


@dataclass(frozen=True)
class DatabaseSummary:
    """What a database file holds, read without changing it."""

    schema: int
    notes: int
    reviews: int
    newest_review: datetime | None
    database_id: int
    """`Store.database_id`: random per database, kept by its copies; 0 if not yet given."""
    oldest_note: str | None
    """Key and first-seen instant of its oldest note (notes rows are never deleted): tells
    databases apart where one has no id yet. None when it has no notes: no history."""

    def holds(self, known) -> bool:
        """Whether this is the database `known` (a `markers.KnownHistory`) was taken from."""
        if self.oldest_note is None:
            return False
        if known.database_id and self.database_id:
            return known.database_id == self.database_id
        return known.oldest_note == self.oldest_note


def inspect_database(database_file: Path, detail: bool = True) -> DatabaseSummary:
    """Read a database file's size and identity, read-only; StoreError when it is unusable.
    Without `detail`, `notes` and `newest_review` are left 0/None (they cost a scan each)."""
    try:
        conn = sqlite3.connect(f"file:{_quote(str(database_file))}?mode=ro", uri=True)
    except sqlite3.Error as exc:
        raise store_error(exc, database_file) from exc
    try:
        schema = conn.execute("PRAGMA user_version").fetchone()[0]
        database_id = conn.execute("PRAGMA application_id").fetchone()[0]
        if schema > SCHEMA_VERSION:
            raise newer_schema_error(database_file, schema)
        if schema == 0:  # new and empty, or not studyapp's: every migration sets the version with its tables
            tables = foreign_tables(conn)
            if tables:
                raise ForeignDatabase(database_file, tables)
            return DatabaseSummary(0, 0, 0, None, database_id, None)
        reviews = conn.execute("SELECT COUNT(*) FROM reviews").fetchone()[0]
        notes, newest = 0, None
        if detail:
            notes = conn.execute("SELECT COUNT(*) FROM notes").fetchone()[0]
            newest = conn.execute("SELECT MAX(reviewed_at) FROM reviews").fetchone()[0]
        first = conn.execute("SELECT key, first_seen FROM notes ORDER BY key LIMIT 1").fetchone()
    except sqlite3.Error as exc:
        raise store_error(exc, database_file) from exc
    finally:
        conn.close()
    return DatabaseSummary(
        schema=schema, notes=notes, reviews=reviews,
        newest_review=None if newest is None else datetime.fromisoformat(newest),
        database_id=database_id,
        oldest_note=None if first is None else f"{first[0]}|{first[1]}",
    )


def check_backup(backup: Backup) -> DatabaseSummary:
    """The backup's summary after SQLite's own consistency check; StoreError when damaged,
    naming the backup (not "the review database", whose advice is to restore a backup)."""
    try:
        summary = inspect_database(backup.path)
        conn = sqlite3.connect(f"file:{_quote(str(backup.path))}?mode=ro", uri=True)
        try:
            verdict = conn.execute("PRAGMA quick_check").fetchone()[0]
        except sqlite3.Error as exc:
            raise store_error(exc, backup.path) from exc
        finally:
            conn.close()
    except ForeignDatabase as exc:
        raise StoreError(f"the backup {backup.name} is not a studyapp database (it holds another program's "
                         f"tables: {', '.join(exc.tables)}); pick another from `studyapp backup list`",
                         StoreProblem.DAMAGED) from None
    except StoreError as exc:
        if exc.problem is not StoreProblem.DAMAGED:
            raise
        verdict = str(exc.__cause__ or exc)
    if verdict != "ok":
        raise StoreError(f"the backup {backup.name} is damaged ({verdict}); pick another "
                         "from `studyapp backup list`", StoreProblem.DAMAGED)
    return summary


def list_backups(folder: Path) -> list[Backup]:
    """Every backup in `folder`, newest first."""
    try:
        names = os.listdir(folder)
    except FileNotFoundError:
        return []
    found = []
    for name in names:
        match = _NAME.match(name)
        if match:
            try:
                taken = datetime.strptime(match["stamp"], _STAMP).replace(tzinfo=timezone.utc)
            except ValueError:  # named like one by hand, on no real day (Feb 30): not a backup of ours
                continue
            found.append((taken, int(match["n"] or 1),
                          Backup(folder / name, BackupKind(match["kind"]), taken)))
    found.sort(key=lambda item: item[:2], reverse=True)  # `-2` was taken after `` that second
    return [backup for *_, backup in found]


def default_restore(found: list[Backup]) -> Backup | None:
    """What `studyapp backup restore` brings back without a name: the newest automatic or
    manual one (restoring a pre-restore copy would undo the last restore; an other-vault copy
    is another vault's history)."""
    chosen = [b for b in found if b.kind in (BackupKind.AUTO, BackupKind.MANUAL)] or found
    return chosen[0] if chosen else None


def take_backup(database_file: Path, folder: Path, now: datetime,
                kind: BackupKind = BackupKind.MANUAL) -> Backup:
    """Copy the database into `folder` with the online backup API; returns the new backup.

    The copy is written under a name of this process's own (two processes taking a backup
    in the same second never remove or overwrite each other's), then given a free name."""
    folder.mkdir(parents=True, exist_ok=True)
    stem = f"{kind.value}-{now.astimezone(timezone.utc).strftime(_STAMP)}"
    temp = folder / f".{stem}.{os.getpid()}-{os.urandom(4).hex()}{PARTIAL_SUFFIX}"
    try:
        source = sqlite3.connect(f"file:{_quote(str(database_file))}?mode=ro", uri=True)
        try:
            copy = sqlite3.connect(temp)
            try:
                source.backup(copy)
                copy.execute("PRAGMA journal_mode=DELETE")  # one self-contained file
            finally:
                copy.close()
        finally:
            source.close()
        with open(temp, "rb+") as handle:
            os.fsync(handle.fileno())
        target = _place(temp, folder, stem)
    except BaseException as exc:
        temp.unlink(missing_ok=True)
        if isinstance(exc, sqlite3.Error):
            raise store_error(exc, database_file) from exc
        raise
    return Backup(target, kind, now.astimezone(timezone.utc).replace(microsecond=0))


def _place(temp: Path, folder: Path, stem: str) -> Path:
    """Give the finished copy the first free `<stem>[-n].sqlite3` name, never replacing one
    another process gave its copy meanwhile (a hard link fails on an existing name)."""
    n = 1
    while True:
        target = folder / (f"{stem}.sqlite3" if n == 1 else f"{stem}-{n}.sqlite3")
        n += 1
        try:
            os.link(temp, target)
        except FileExistsError:
            continue
        except OSError:  # no hard links on this file system: the free name, then a rename
            if target.exists():
                continue
            os.replace(temp, target)
            return target
        temp.unlink()
        return target


def take_backup_if_due(database_file: Path, folder: Path, now: datetime,
                       every: timedelta | None = None) -> Backup | None:
    """An automatic backup when the newest is older than `every` (default `BACKUP_EVERY`) and
    the database changed since it; then the oldest automatic ones beyond `BACKUPS_KEPT` go.

    One process at a time takes it: commands started together (none finds a backup yet)
    would each take one, and the others find it taken (a lock file in `folder`)."""
    every = BACKUP_EVERY if every is None else every
    if not _backup_due(database_file, folder, now, every):
        return None
    from studyapp.locking import WriterLock

    lock_file = folder / TAKING_LOCK
    folder.mkdir(parents=True, exist_ok=True)
    os.close(os.open(lock_file, os.O_RDWR | os.O_CREAT, 0o644))  # unwritable: said as before
    with WriterLock(lock_file, wait_seconds=0).attempt() as held:
        if not held or not _backup_due(database_file, folder, now, every):
            return None  # another process is taking it, or just took it
        backup = take_backup(database_file, folder, now, BackupKind.AUTO)
        rotate(folder)
        remove_stale_partials(folder)
    return backup


TAKING_LOCK = ".taking.lock"
"""Held by the process taking an automatic backup (`take_backup_if_due`)."""
PARTIAL_SUFFIX = ".partial"
STALE_PARTIAL = timedelta(hours=1)
"""A copy still unfinished after this long was left by a process that was killed."""


def _backup_due(database_file: Path, folder: Path, now: datetime, every: timedelta) -> bool:
    existing = list_backups(folder)
    if not existing:
        return True
    newest = existing[0]
    return now - newest.taken_at >= every and not _unchanged_since(database_file, newest)


def remove_stale_partials(folder: Path) -> list[Path]:
    """Delete unfinished copies left by killed processes (by their age: one being written
    right now by another process is younger)."""
    removed: list[Path] = []
    cutoff = datetime.now(timezone.utc).timestamp() - STALE_PARTIAL.total_seconds()
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return removed
    for entry in entries:
        if entry.name.startswith(".") and entry.name.endswith(PARTIAL_SUFFIX):
            try:
                if entry.stat(follow_symlinks=False).st_mtime < cutoff:
                    os.unlink(entry.path)
                    removed.append(Path(entry.path))
            except OSError:
                continue
    return removed


def rotate(folder: Path, keep: int | None = None) -> list[Path]:
    """Delete automatic backups beyond the newest `keep` (default `BACKUPS_KEPT`)."""
    keep = BACKUPS_KEPT if keep is None else keep
    autos = [b for b in list_backups(folder) if b.kind is BackupKind.AUTO]
    removed = []
    for backup in autos[keep:]:
        backup.path.unlink(missing_ok=True)
        removed.append(backup.path)
    return removed


def _unchanged_since(database_file: Path, backup: Backup) -> bool:
    """Neither the database nor its write-ahead log was written after `backup` was (both
    times read from the file system's own clock)."""
    try:
        taken = backup.path.stat().st_mtime_ns
    except FileNotFoundError:
        return False
    for path in (database_file, Path(f"{database_file}-wal")):
        try:
            if path.stat().st_mtime_ns > taken:
                return False
        except FileNotFoundError:
            pass
    return True


@dataclass(frozen=True)
class RestoreResult:
    """What `restore_backup` did."""

    backup: Backup
    summary: DatabaseSummary
    saved_current: Backup | None
    """The database as it was before, kept as a `before-restore` backup."""
    damaged_kept: Path | None
    """A damaged database moved aside (it could not be copied through SQLite)."""


def restore_backup(database_file: Path, folder: Path, backup: Backup,
                   now: datetime) -> RestoreResult:
    """Replace the database's content with `backup`'s, keeping the current one first.

    A healthy current database is copied to a `before-restore` backup and then overwritten
    through the backup API (so a running app sees the restored history, not a stale file);
    a damaged one is moved aside whole, with its write-ahead log.
    """
    summary = check_backup(backup)
    saved = damaged = None
    if database_file.exists():
        try:
            current = inspect_database(database_file)
        except StoreError as exc:
            if exc.problem is not StoreProblem.DAMAGED:
                raise
            damaged = move_aside(database_file, folder, now)
        else:
            if current.oldest_note is not None:
                saved = take_backup(database_file, folder, now, BackupKind.BEFORE_RESTORE)
    database_file.parent.mkdir(parents=True, exist_ok=True)
    source = sqlite3.connect(f"file:{_quote(str(backup.path))}?mode=ro", uri=True)
    try:
        target = sqlite3.connect(database_file, timeout=10)
        try:
            source.backup(target)
            target.execute("PRAGMA journal_mode=WAL")
        finally:
            target.close()
    except sqlite3.Error as exc:
        raise store_error(exc, database_file) from exc
    finally:
        source.close()
    return RestoreResult(backup, summary, saved, damaged)


def move_aside(database_file: Path, folder: Path, now: datetime) -> Path:
    """Move a damaged database (and its -wal, -shm) into `folder` as `damaged-<time>`."""
    folder.mkdir(parents=True, exist_ok=True)
    stamp = now.astimezone(timezone.utc).strftime(_STAMP)
    kept = folder / f"damaged-{stamp}.sqlite3"
    os.replace(database_file, kept)
    for suffix in ("-wal", "-shm"):
        side = Path(f"{database_file}{suffix}")
        if side.exists():
            os.replace(side, Path(f"{kept}{suffix}"))
    return kept


def _quote(path: str) -> str:
    """The path escaped for an SQLite URI (urllib is imported only when a backup is read)."""
    from urllib.parse import quote

    return quote(path)
