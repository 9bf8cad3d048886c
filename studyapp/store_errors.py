"""Why the review database cannot be used, in one line the user can act on.

Apart from `store.py` because `errors.user_message` and `backups` translate sqlite3 failures
without opening a database (and without importing the Store).
"""

from __future__ import annotations

import sqlite3
from enum import Enum
from pathlib import Path

from studyapp.errors import UserError
from studyapp.store_schema import SCHEMA_VERSION


class StoreProblem(Enum):
    """Why the review database cannot be used; doctor and the front ends branch on it."""

    DAMAGED = "damaged"
    NEWER = "newer"
    READ_ONLY = "read-only"
    FULL = "full"
    BUSY = "busy"
    UNAVAILABLE = "unavailable"


class StoreError(UserError):
    """The database cannot be used: one line for the user that says why and what to do."""

    def __init__(self, message: str, problem: StoreProblem = StoreProblem.UNAVAILABLE):
        super().__init__(message)
        self.problem = problem


_FULL_BELOW_BYTES = 1 << 20
"""Free space under which an SQLite I/O error is taken for a full disk (it reports
`disk I/O error` when the shared-memory file cannot grow)."""


def store_error(exc: sqlite3.Error, database_file: Path | str | None) -> StoreError:
    """A sqlite3 failure as a StoreError that names the file, the cause and the way out."""
    name = getattr(exc, "sqlite_errorname", "") or ""  # Python 3.11+
    text = str(exc)
    lowered = text.lower()
    where = Path(database_file) if database_file else Path("studyapp.sqlite3")
    if ("CORRUPT" in name or "NOTADB" in name or "malformed" in lowered
            or "not a database" in lowered):
        return StoreError(
            f"the review database is damaged ({where}: {text}); `studyapp backup restore` "
            "brings back the newest backup (`studyapp backup list` shows them), "
            "or `studyapp rebuild` starts afresh from the notes' review keys",
            StoreProblem.DAMAGED)
    if "FULL" in name or "disk is full" in lowered or (
            ("IOERR" in name or "disk i/o error" in lowered) and _nearly_full(where.parent)):
        return StoreError(
            f"the disk holding the review database is full ({where}); free some space and "
            "try again",
            StoreProblem.FULL)
    if "READONLY" in name or "readonly" in lowered or (
            ("CANTOPEN" in name or "unable to open" in lowered) and not _writable(where.parent)):
        return StoreError(
            f"the review database cannot be written ({where}: the file or its folder is "
            "read-only); make both writable, or use another --data-dir",
            StoreProblem.READ_ONLY)
    if "BUSY" in name or "LOCKED" in name or "locked" in lowered:
        return StoreError(
            f"the review database is busy ({where}): another studyapp is writing; try again",
            StoreProblem.BUSY)
    if where.is_dir():  # SQLite says "unable to open" or "disk I/O error"
        return StoreError(f"{where} is a folder, not a database file: move it away",
                          StoreProblem.UNAVAILABLE)
    return StoreError(f"cannot use the review database ({where}): {text}",
                      StoreProblem.UNAVAILABLE)


def newer_schema_error(database_file: Path, version: int) -> StoreError:
    return StoreError(
        f"{database_file} was written by a newer studyapp (schema {version}, this one knows "
        f"{SCHEMA_VERSION}); upgrade studyapp", StoreProblem.NEWER)


def is_failure(exc: sqlite3.Error) -> bool:
    """The file or the disk failed (translated to StoreError), as opposed to a broken
    constraint or a misuse of the API, which are bugs and keep their own type."""
    return isinstance(exc, sqlite3.OperationalError) or type(exc) is sqlite3.DatabaseError


def _nearly_full(folder: Path) -> bool:
    import shutil  # only on the error path: shutil is slow to import

    try:
        return shutil.disk_usage(folder).free < _FULL_BELOW_BYTES
    except OSError:
        return False


def _writable(folder: Path) -> bool:
    """Whether a file can be created in `folder` (tried: modes do not tell, for root)."""
    import tempfile

    try:
        with tempfile.NamedTemporaryFile(dir=folder, prefix=".studyapp-probe-"):
            return True
    except OSError:
        return False


class ForeignDatabase(StoreError):
    """An SQLite file with tables but no studyapp schema version (every migration sets one with
    its tables): another program's database, an Anki collection copied into the data dir or kept
    beside the backups. As unusable as a damaged one, and said so."""

    def __init__(self, database_file: Path | str, tables: list[str]):
        self.tables = tables
        super().__init__(f"{database_file} is not a studyapp database: it holds another program's "
                         f"tables ({', '.join(tables)}); `studyapp backup restore` keeps it aside and brings "
                         "back the newest backup, or `studyapp rebuild` starts afresh from the notes' "
                         "review keys", StoreProblem.DAMAGED)


def foreign_tables(conn: sqlite3.Connection) -> list[str]:
    """A few of the tables of a database with tables but schema version 0 (another program's);
    [] for studyapp's, or a new one. Both read in one transaction: another process migrating a
    new database meanwhile commits its tables and its version together."""
    if conn.execute("PRAGMA user_version").fetchone()[0] != 0:
        return []  # studyapp's (a version never goes back to 0): no transaction on every open
    in_transaction = conn.in_transaction
    if not in_transaction:
        conn.execute("BEGIN")
    try:
        if conn.execute("PRAGMA user_version").fetchone()[0] != 0:
            return []
        return [row[0] for row in conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name LIMIT 4")]
    finally:
        if not in_transaction:
            conn.execute("COMMIT")
