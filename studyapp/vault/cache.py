"""The metadata cache: parsed blocks and titles in SQLite, keyed by path, size and mtime.

A warm load only stats files. The cache is an optimisation: any error reading or writing it
is ignored and the vault is read from disk.
"""

from __future__ import annotations

import json
import sqlite3
import time
from datetime import date, datetime
from pathlib import Path

SCHEMA_VERSION = "1"
"""Bump when the parser's output changes (title rules, fields): old rows are then discarded."""
RACY_WINDOW_NS = 2_000_000_000
"""Files modified this recently are not cached: a second edit within the same mtime tick
and of the same size would otherwise go unseen (git's "racy clean" problem)."""
_DATE_TAG = "\x00date"
_DATETIME_TAG = "\x00datetime"


def _encode(value):
    if isinstance(value, datetime):
        return {_DATETIME_TAG: value.isoformat()}
    if isinstance(value, date):
        return {_DATE_TAG: value.isoformat()}
    raise TypeError(type(value).__name__)


def _decode(obj: dict):
    if len(obj) == 1:
        if _DATE_TAG in obj:
            return date.fromisoformat(obj[_DATE_TAG])
        if _DATETIME_TAG in obj:
            return datetime.fromisoformat(obj[_DATETIME_TAG])
    return obj


def _json_safe(value) -> bool:
    """True when JSON round-trips the value exactly (string keys, no sets or bytes)."""
    if isinstance(value, dict):
        return all(isinstance(k, str) and _json_safe(v) for k, v in value.items())
    if isinstance(value, list):
        return all(_json_safe(v) for v in value)
    return value is None or isinstance(value, (str, int, float, date))


def encode_meta(meta: dict) -> str | None:
    """JSON for the cache, or None when the metadata does not survive JSON (then it is re-parsed)."""
    if not _json_safe(meta):
        return None
    return json.dumps(meta, default=_encode, ensure_ascii=False)


def decode_meta(text: str) -> dict:
    return json.loads(text, object_hook=_decode)


class MetadataCache:
    """Rows for one vault in the cache database."""

    def __init__(self, file: Path, vault_root: Path):
        self.file = file
        self.vault = str(vault_root)

    def _connect(self) -> sqlite3.Connection:
        self.file.parent.mkdir(parents=True, exist_ok=True)
        db = sqlite3.connect(self.file, timeout=5)
        try:
            version = db.execute("PRAGMA user_version").fetchone()[0]
        except sqlite3.DatabaseError:  # not a database (truncated, overwritten): start afresh
            db.close()
            self.file.unlink()
            db = sqlite3.connect(self.file, timeout=5)
            version = None
        if str(version) != SCHEMA_VERSION:
            db.executescript(
                f"""
                DROP TABLE IF EXISTS notes;
                CREATE TABLE notes (
                    vault TEXT NOT NULL, path TEXT NOT NULL,
                    size INTEGER NOT NULL, mtime_ns INTEGER NOT NULL,
                    content_hash TEXT, has_block INTEGER, title TEXT, meta TEXT, problem TEXT,
                    PRIMARY KEY (vault, path)
                ) WITHOUT ROWID;
                PRAGMA user_version = {int(SCHEMA_VERSION)};
                """
            )
        return db

    def read(self) -> dict[str, tuple]:
        """path -> (size, mtime_ns, content_hash, has_block, title, meta_json, problem)."""
        try:
            db = self._connect()
            try:
                rows = db.execute(
                    "SELECT path, size, mtime_ns, content_hash, has_block, title, meta, problem"
                    " FROM notes WHERE vault = ?",
                    (self.vault,),
                ).fetchall()
            finally:
                db.close()
        except (sqlite3.Error, OSError):
            return {}
        return {row[0]: row[1:] for row in rows}

    def update(self, fresh: list[tuple], gone: list[str]) -> None:
        """Store fresh rows (path, size, mtime_ns, hash, has_block, title, meta_json, problem)
        and forget paths that no longer exist."""
        if not fresh and not gone:
            return
        now_ns = time.time_ns()
        stable = [row for row in fresh if now_ns - row[2] > RACY_WINDOW_NS]
        racy = [(self.vault, row[0]) for row in fresh if now_ns - row[2] <= RACY_WINDOW_NS]
        try:
            db = self._connect()
            try:
                with db:
                    db.executemany(
                        "INSERT OR REPLACE INTO notes VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                        [(self.vault, *row) for row in stable],
                    )
                    db.executemany(
                        "DELETE FROM notes WHERE vault = ? AND path = ?",
                        [(self.vault, path) for path in gone] + racy,
                    )
            finally:
                db.close()
        except (sqlite3.Error, OSError):
            pass
