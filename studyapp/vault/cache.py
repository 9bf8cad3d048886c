"""The metadata cache: parsed blocks and titles in SQLite, keyed by path, size and mtime.

A warm load only stats files. The cache is an optimisation: any error reading or writing it
is ignored and the vault is read from disk. Besides the block (as JSON, decoded only when a
caller asks for `Note.meta`), each row holds the note's typed review fields, so a warm load
builds notes from plain columns without decoding anything. The rows of a vault are also kept
as one snapshot (a marshal BLOB, rewritten with each change), which a warm load reads in one
go while it is current.
"""

from __future__ import annotations

import functools
import json
import marshal
import math
import sqlite3
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import date, datetime
from pathlib import Path

SCHEMA_VERSION = "13"
"""Bump when the parser's output changes (title rules, fields): old rows are then discarded
(9: a block below blank lines that closes past the head a load reads is no longer a block-less note;
10: nor is a block opened by `---` and a no-break space; 11: a block a review could not write, a
flow-style one without review keys, is a problem; 12: a tag or drill YAML reads as a boolean
is `true`, not Python's `True`, and one named twice is listed once; 13: a title skips thematic
breaks, one-line HTML comments and a heading's closing hashes, and a block below lines of unseen
characters, or with them in front of its `---`, is a problem, and a flow-style block, or one closed by `...`, is named as such)."""
RACY_WINDOW_NS = 2_000_000_000
"""Files modified this recently are not cached: a second edit within the same mtime tick
and of the same size would otherwise go unseen (git's "racy clean" problem). Judged by the
mtime alone: a file's ctime is always recent right after it was copied or its mtime set, and
an edit within one ctime tick that also puts the mtime back is not a thing people do."""
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


_JSON_SCALARS = frozenset((str, int, float, bool, type(None), date, datetime))


def _json_safe(value) -> bool:
    """True when JSON round-trips the value exactly (string keys, no sets or bytes)."""
    kind = type(value)
    if kind is dict:
        for key, item in value.items():  # a loop, not all(...): a cold load checks every block
            if type(key) is not str or (type(item) not in _JSON_SCALARS and not _json_safe(item)):
                return False
        return True
    if kind is list:
        for item in value:
            if type(item) is not str and not _json_safe(item):
                return False
        return True
    return kind in _JSON_SCALARS


def encode_meta(meta: dict) -> str | None:
    """JSON for the cache, or None when the metadata does not survive JSON (then it is re-parsed)."""
    if not _json_safe(meta):
        return None
    return _ENCODER.encode(meta)


_ENCODER = json.JSONEncoder(default=_encode, ensure_ascii=False)
"""`json.dumps(meta, default=_encode, ensure_ascii=False)`, built once rather than per note."""
_DECODER = json.JSONDecoder(object_hook=_decode)


def decode_meta(data: str | bytes) -> dict:
    """The metadata from its cached JSON (stored as UTF-8 bytes: fetching a BLOB skips
    decoding text that a warm load never looks at)."""
    if isinstance(data, bytes):
        data = data.decode("utf-8")
    return _DECODER.decode(data)


_INT64 = range(-(2**63), 2**63)


def note_row(note) -> tuple | None:
    """The cache row of a freshly parsed note (without path, size, mtime before it and ctime
    after it), or None when a value
    would not come back from SQLite exactly (then the note is simply re-parsed next time)."""
    try:
        meta_json = encode_meta(note.meta)
    except (ValueError, TypeError, RecursionError):  # an int JSON will not print, say: not cached
        return None
    mastery = note.mastery_level
    if (meta_json is None or note.review_count not in _INT64
            or (mastery is not None and not math.isfinite(mastery))):
        return None
    fields = note.__dict__  # not `note.content_hash`: that would read a head-loaded note whole
    pairing = fields.get("_pairing")
    if pairing is None and "drills" in note.meta:
        pairing = note.pairing()  # declared: known from the block alone
        fields.pop("_pairing_fresh", None)  # stored with this row: nothing left to remember
    return (fields.get("content_hash"), int(note.has_block), note.title, meta_json.encode("utf-8"),
            None, _iso(note.created), _iso(note.last_reviewed), _iso(note.next_review),
            note.review_count, note.difficulty, mastery,
            encode_list(note.tags), encode_list(note.drills), fields.get("_head_mark"),
            None if pairing is None else _encode_pairing(pairing))


def _encode_pairing(pairing) -> str:
    from studyapp.pairing import encode_pairing

    return encode_pairing(pairing)


def _iso(day: date | None) -> str | None:
    return None if day is None else day.isoformat()


_SEP = "\x1f"


def encode_list(items: list[str]) -> str:
    """A list of strings as text that `decode_list` splits back without a JSON decoder:
    "" for [], else each item after a unit separator (JSON when an item holds one)."""
    if not items:
        return ""
    if any(_SEP in item for item in items):
        return json.dumps(items, ensure_ascii=False)
    return _SEP + _SEP.join(items)


def decode_list(text: str) -> list[str]:
    if not text:
        return []
    if text[0] == _SEP:
        return text[1:].split(_SEP)
    return json.loads(text)


COLUMNS = ("path, size, mtime_ns, content_hash, has_block, title, meta, problem, created,"
           " last_reviewed, next_review, review_count, difficulty, mastery_level, tags, drills,"
           " head_mark, pairing, ctime_ns")
"""A row is current while the file's size, mtime and ctime are the ones it holds (ctime last:
it came later, and the positions before it are used by number). `content_hash` is NULL for a note parsed from its head only (`head_mark` then says what was
read); `pairing` is NULL until the note's drills were worked out for this version of it."""


def _serialised(method):
    """One thread at a time in the cache's rows (see `MetadataCache._lock`)."""

    @functools.wraps(method)
    def wrapper(self, *args, **kwargs):
        with self._lock:
            return method(self, *args, **kwargs)

    return wrapper


@dataclass
class _Writes:
    """Changes to a vault's rows, written together (`MetadataCache._write`)."""

    rows: dict[str, tuple] = field(default_factory=dict)
    """Whole rows to store, by path."""
    forget: set[str] = field(default_factory=set)
    """Paths whose rows go: files gone, or changed too recently to be trusted."""
    pairings: list[tuple] = field(default_factory=list)
    """(pairing, vault, path, size, mtime_ns, ctime_ns) for rows stored earlier."""


class MetadataCache:
    """Rows for one vault in the cache database."""

    def __init__(self, file: Path, vault_root: Path):
        self.file = file
        self.vault = str(vault_root)
        self._rows: dict[str, tuple] = {}
        """The rows as this process last read or wrote them (what a snapshot saves)."""
        self._generation: int | None = None
        """The vault's change count when `_rows` matched the database; None: unknown."""
        self._pending: _Writes | None = None
        """While `held`: the changes not written yet."""
        self._lock = threading.RLock()
        """The TUI's load thread may be writing while the app closes (`release`)."""
        self._final = False
        """Released for good: nothing is held any more."""

    def _connect(self) -> sqlite3.Connection:
        self.file.parent.mkdir(parents=True, exist_ok=True)
        db = sqlite3.connect(self.file, timeout=5, isolation_level=None)
        try:
            version = db.execute("PRAGMA user_version").fetchone()[0]
        except sqlite3.DatabaseError:  # not a database (truncated, overwritten): start afresh
            db.close()
            self.file.unlink()
            db = sqlite3.connect(self.file, timeout=5, isolation_level=None)
            version = None
        if str(version) != SCHEMA_VERSION:
            db.executescript(
                f"""
                DROP TABLE IF EXISTS notes;
                CREATE TABLE notes (
                    vault TEXT NOT NULL, path TEXT NOT NULL,
                    size INTEGER NOT NULL, mtime_ns INTEGER NOT NULL,
                    content_hash TEXT, has_block INTEGER, title TEXT, meta BLOB, problem TEXT,
                    created TEXT, last_reviewed TEXT, next_review TEXT, review_count INTEGER,
                    difficulty TEXT, mastery_level REAL, tags TEXT, drills TEXT,
                    head_mark TEXT, pairing TEXT, ctime_ns INTEGER NOT NULL,
                    PRIMARY KEY (vault, path)
                ) WITHOUT ROWID;
                DROP TABLE IF EXISTS snapshots;
                CREATE TABLE snapshots (
                    vault TEXT PRIMARY KEY, generation INTEGER NOT NULL,
                    snapshot_generation INTEGER, snapshot_format TEXT, snapshot BLOB
                );
                PRAGMA user_version = {int(SCHEMA_VERSION)};
                """
            )
        return db

    @_serialised
    def read(self) -> dict[str, tuple]:
        """path -> the whole row, in the order of COLUMNS (path first).

        From the vault's snapshot when it is current (one BLOB: a few times faster than
        10,000 rows of 19 columns), else from the rows, then kept as the snapshot. Writes held
        until now are written first (they go on being held): a reload must find its rows."""
        if self._pending is not None:
            self._write(self._pending)  # nothing when nothing is held
            self._pending = _Writes()
        self._rows, self._generation = {}, None
        try:
            db = self._connect()
            try:
                found = db.execute("SELECT generation, snapshot_generation, snapshot_format, snapshot"
                                   " FROM snapshots WHERE vault = ?", (self.vault,)).fetchone()
                generation = found[0] if found else 0
                current = found is not None and found[1] == generation and found[2] == SNAPSHOT_FORMAT
                snapshot = _unmarshal(found[3]) if current else None
                rows = snapshot if snapshot is not None else db.execute(
                    f"SELECT {COLUMNS} FROM notes WHERE vault = ?", (self.vault,)).fetchall()
                self._rows, self._generation = {row[0]: row for row in rows}, generation
                if snapshot is None:
                    try:
                        with _writing(db):
                            self._save_snapshot(db, bump=False)
                    except sqlite3.Error:  # read-only, or busy: the rows are read next time too
                        pass
            finally:
                db.close()
        except (sqlite3.Error, OSError):
            return {}
        return dict(self._rows)

    @_serialised
    def update(self, fresh: list[tuple], gone: list[str]) -> None:
        """Store fresh rows (in the order of COLUMNS; see `note_row` and `problem_row`) and
        forget paths that no longer exist."""
        if not fresh and not gone:
            return
        now_ns = time.time_ns()
        writes = self._pending or _Writes()
        for row in fresh:
            if now_ns - row[2] > RACY_WINDOW_NS:
                self._rows[row[0]] = writes.rows[row[0]] = row
                writes.forget.discard(row[0])
            else:
                self._forget(writes, row[0])
        for path in gone:
            self._forget(writes, path)
        if writes is not self._pending:
            self._write(writes)

    def _forget(self, writes: _Writes, path: str) -> None:
        self._rows.pop(path, None)
        writes.rows.pop(path, None)
        writes.forget.add(path)

    @_serialised
    def remember_pairings(self, pairings: list[tuple[str, int, int, int, str]]) -> None:
        """Store `(path, size, mtime_ns, ctime_ns, pairing JSON)` on the rows of those very
        versions of the notes (a row that changed meanwhile is left as it is)."""
        if not pairings:
            return
        writes = self._pending or _Writes()
        for path, size, mtime, ctime, text in pairings:
            row = self._rows.get(path)
            if row is not None and row[1] == size and row[2] == mtime and row[18] == ctime and row[7] is None:
                self._rows[path] = row = row[:17] + (text,) + row[18:]
                if path in writes.rows:  # not written yet: written whole, pairing included
                    writes.rows[path] = row
                    continue
            writes.pairings.append((text, self.vault, path, size, mtime, ctime))
        if writes is not self._pending:
            self._write(writes)

    @contextmanager
    def held(self) -> Iterator[None]:
        """Within: `update` and `remember_pairings` change the rows in memory only; on leaving,
        everything they changed is written in one transaction with one snapshot. A cold `due`
        stores 10,000 parsed rows, then the pairings it worked out: one ~5 MB snapshot, not two.
        A command that fails or is interrupted after its load still keeps what it parsed."""
        held_here = self.hold()
        try:
            yield
        finally:
            if held_here:
                self.release()

    @_serialised
    def hold(self) -> bool:
        """Start holding writes (see `held`); False when they are held already, or after
        `release(final=True)` (an app closing while its load thread is still on its way)."""
        if self._pending is not None or self._final:
            return False
        self._pending = _Writes()
        return True

    @_serialised
    def release(self, final: bool = False) -> None:
        """Write what was held, and write at once from now on (`final`: for good)."""
        self._final = self._final or final
        pending, self._pending = self._pending, None
        if pending is not None:
            self._write(pending)

    def _write(self, writes: _Writes) -> None:
        """Apply the changes in one write transaction, then save the snapshot; errors ignored."""
        if not (writes.rows or writes.forget or writes.pairings):
            return
        try:
            db = self._connect()
            try:
                with _writing(db):
                    db.executemany(
                        f"INSERT OR REPLACE INTO notes (vault, {COLUMNS}) VALUES ({', '.join('?' * 20)})",
                        [(self.vault, *row) for row in writes.rows.values()],
                    )
                    db.executemany(
                        "DELETE FROM notes WHERE vault = ? AND path = ?",
                        [(self.vault, path) for path in writes.forget],
                    )
                    db.executemany(
                        "UPDATE notes SET pairing = ? WHERE vault = ? AND path = ? AND size = ?"
                        " AND mtime_ns = ? AND ctime_ns = ? AND problem IS NULL", writes.pairings)
                    self._save_snapshot(db)
            finally:
                db.close()
        except (sqlite3.Error, OSError):
            pass

    def _save_snapshot(self, db: sqlite3.Connection, bump: bool = True) -> None:
        """Inside a write transaction: count one more change to the vault's rows (`bump`) and,
        when no other process changed them since `read` (the generation is the one read),
        keep the rows this process holds as the snapshot; otherwise the snapshot is left
        stale and the next `read` rebuilds it from the rows."""
        found = db.execute("SELECT generation FROM snapshots WHERE vault = ?", (self.vault,)).fetchone()
        generation = found[0] if found else 0
        current = self._generation is not None and generation == self._generation
        if bump:
            generation += 1
        snapshot = marshal.dumps(list(self._rows.values())) if current else None
        db.execute(
            "INSERT OR REPLACE INTO snapshots (vault, generation, snapshot_generation,"
            " snapshot_format, snapshot) VALUES (?, ?, ?, ?, ?)",
            (self.vault, generation, generation if current else None, SNAPSHOT_FORMAT, snapshot))
        self._generation = generation if current else None


@contextmanager
def _writing(db: sqlite3.Connection) -> Iterator[None]:
    """One write transaction, taken before anything is read (so the generation a snapshot is
    checked against cannot change under it)."""
    db.execute("BEGIN IMMEDIATE")
    try:
        yield
    except BaseException:
        db.execute("ROLLBACK")
        raise
    db.execute("COMMIT")


SNAPSHOT_FORMAT = f"marshal {marshal.version} python {sys.version_info[0]}.{sys.version_info[1]}"
"""A snapshot is read back only by the same marshal format (it changes between Pythons)."""


def _unmarshal(blob: bytes | None) -> list[tuple] | None:
    """The snapshot's rows, or None when it is missing or damaged (then the rows are read)."""
    if blob is None:
        return None
    try:
        rows = marshal.loads(blob)
    except (ValueError, EOFError, TypeError):
        return None
    if type(rows) is not list or not all(type(row) is tuple and len(row) == 19 for row in rows):
        return None
    return rows


def problem_row(reason: str) -> tuple:
    """The cache row of a file that cannot be read as a note (without path, size, mtime, ctime)."""
    return (None, None, None, None, reason) + (None,) * 10
