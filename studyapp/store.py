"""The review database: note identity, FSRS card state, the review log, drill attempts, fitted
parameters, and a journal that makes a review's file write and database rows one unit.

Plain stdlib `sqlite3` in WAL mode with foreign keys on. The schema is versioned with
`PRAGMA user_version`; `MIGRATIONS[i]` upgrades a database from version i to i + 1, so an old
database is brought forward in place on open and never rebuilt.

All instants are stored as ISO-8601 text in UTC (`2026-11-22T09:30:00+00:00`), which sorts
correctly as text. One `Store` keeps one connection open: the TUI records reviews in a loop.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timezone
from enum import Enum
from operator import itemgetter
from pathlib import Path
from typing import Any, overload

from studyapp.errors import UserError

MIGRATIONS: tuple[str, ...] = (
    # 0 -> 1: notes, their scheduler state and the review log.
    """
    CREATE TABLE notes (
        key INTEGER PRIMARY KEY,
        path TEXT NOT NULL,
        content_hash TEXT,
        title TEXT,
        deleted INTEGER NOT NULL DEFAULT 0,
        first_seen TEXT NOT NULL
    );
    CREATE UNIQUE INDEX notes_live_path ON notes(path) WHERE deleted = 0;
    CREATE TABLE cards (
        note_key INTEGER PRIMARY KEY REFERENCES notes(key),
        state INTEGER NOT NULL,
        step INTEGER,
        stability REAL,
        difficulty REAL,
        due TEXT NOT NULL,
        last_review TEXT,
        suspended INTEGER NOT NULL DEFAULT 0,
        reps INTEGER NOT NULL DEFAULT 0,
        lapses INTEGER NOT NULL DEFAULT 0,
        legacy INTEGER NOT NULL DEFAULT 0
    );
    CREATE INDEX cards_due ON cards(due);
    CREATE TABLE reviews (
        id INTEGER PRIMARY KEY,
        note_key INTEGER NOT NULL REFERENCES notes(key),
        rating INTEGER NOT NULL CHECK (rating BETWEEN 1 AND 4),
        reviewed_at TEXT NOT NULL,
        duration_ms INTEGER,
        state_before INTEGER,
        state_after INTEGER NOT NULL,
        stability_before REAL,
        stability_after REAL,
        difficulty_before REAL,
        difficulty_after REAL,
        due_before TEXT,
        due_after TEXT NOT NULL,
        scheduled_days REAL NOT NULL,
        elapsed_days REAL,
        card_before TEXT,
        file_values_before TEXT,
        path TEXT NOT NULL,
        hash_before TEXT,
        hash_after TEXT
    );
    CREATE INDEX reviews_note ON reviews(note_key, reviewed_at);
    CREATE INDEX reviews_time ON reviews(reviewed_at);
    """,
    # 1 -> 2: drill attempts, fitted parameters, undo bytes and the write journal.
    """
    CREATE TABLE drill_attempts (
        id INTEGER PRIMARY KEY,
        note_key INTEGER REFERENCES notes(key),
        topic TEXT,
        drill_id TEXT NOT NULL,
        verdict TEXT NOT NULL CHECK (verdict IN ('pass', 'fail', 'error')),
        summary TEXT,
        attempted_at TEXT NOT NULL,
        duration_ms INTEGER,
        file_path TEXT
    );
    CREATE INDEX drill_attempts_drill ON drill_attempts(drill_id, attempted_at);
    CREATE TABLE params (
        id INTEGER PRIMARY KEY,
        fitted_at TEXT NOT NULL,
        parameters TEXT NOT NULL,
        log_loss_before REAL,
        log_loss_after REAL,
        review_count INTEGER
    );
    CREATE TABLE undo_bytes (
        review_id INTEGER PRIMARY KEY REFERENCES reviews(id) ON DELETE CASCADE,
        content BLOB NOT NULL
    );
    CREATE TABLE journal (
        id INTEGER PRIMARY KEY,
        kind TEXT NOT NULL,
        path TEXT NOT NULL,
        hash_before TEXT,
        hash_after TEXT,
        payload TEXT NOT NULL,
        created_at TEXT NOT NULL
    );
    """,
    # 2 -> 3: the per-device event log is the truth (`studyapp.history`): rows replayed from it
    # carry their event's id, and how much of each device's log file the cache holds.
    """
    ALTER TABLE reviews ADD COLUMN event_id TEXT;
    CREATE UNIQUE INDEX reviews_event ON reviews(event_id) WHERE event_id IS NOT NULL;
    ALTER TABLE drill_attempts ADD COLUMN event_id TEXT;
    CREATE TABLE log_files (
        device TEXT PRIMARY KEY,
        size INTEGER NOT NULL
    );
    """,
    # 3 -> 4: drills as review items (`studyapp.drill_reviews`): each drill's own FSRS card,
    # its reviews, and the marks of a try (start, hints, give-up). Keyed by drill id, apart
    # from notes: every query over `cards` and `reviews` means notes.
    """
    CREATE TABLE drill_cards (
        drill_id TEXT PRIMARY KEY,
        state INTEGER NOT NULL,
        step INTEGER,
        stability REAL,
        difficulty REAL,
        due TEXT NOT NULL,
        last_review TEXT,
        suspended INTEGER NOT NULL DEFAULT 0,
        reps INTEGER NOT NULL DEFAULT 0,
        lapses INTEGER NOT NULL DEFAULT 0
    );
    CREATE TABLE drill_reviews (
        id INTEGER PRIMARY KEY,
        drill_id TEXT NOT NULL,
        rating INTEGER NOT NULL CHECK (rating BETWEEN 1 AND 4),
        proposed INTEGER,
        reviewed_at TEXT NOT NULL,
        duration_ms INTEGER,
        hints INTEGER NOT NULL DEFAULT 0,
        runs INTEGER NOT NULL DEFAULT 0,
        failed_runs INTEGER NOT NULL DEFAULT 0,
        gave_up INTEGER NOT NULL DEFAULT 0,
        state_before INTEGER,
        state_after INTEGER NOT NULL,
        stability_before REAL,
        stability_after REAL,
        due_before TEXT,
        due_after TEXT NOT NULL,
        try_start TEXT,
        event_id TEXT UNIQUE
    );
    CREATE INDEX drill_reviews_drill ON drill_reviews(drill_id, reviewed_at);
    CREATE TABLE drill_marks (
        id INTEGER PRIMARY KEY,
        drill_id TEXT NOT NULL,
        kind TEXT NOT NULL CHECK (kind IN ('start', 'hint', 'giveup')),
        at TEXT NOT NULL,
        event_id TEXT UNIQUE
    );
    CREATE INDEX drill_marks_drill ON drill_marks(drill_id, at);
    """,
)
SCHEMA_VERSION = len(MIGRATIONS)

_REVIEW_INDEXES = (
    "CREATE INDEX reviews_note ON reviews(note_key, reviewed_at)",
    "CREATE INDEX reviews_time ON reviews(reviewed_at)",
    "CREATE UNIQUE INDEX reviews_event ON reviews(event_id) WHERE event_id IS NOT NULL",
)
"""The review log's indexes as the migrations create them (`replace_replayed` rebuilds them)."""

UNDO_DEPTH = 50
"""How many recent reviews keep the note's old bytes for an exact undo."""

DRILL_VERDICTS = ("pass", "fail", "error")


def utc_text(moment: datetime) -> str:
    """The stored form of an instant: ISO-8601 in UTC, so text order is time order."""
    if moment.tzinfo is None:
        raise ValueError("instants must be timezone-aware")
    return moment.astimezone(timezone.utc).isoformat()


@overload
def parse_utc(text: str) -> datetime: ...
@overload
def parse_utc(text: None) -> None: ...
def parse_utc(text: str | None) -> datetime | None:
    return None if text is None else datetime.fromisoformat(text)


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
    return StoreError(f"cannot use the review database ({where}): {text}",
                      StoreProblem.UNAVAILABLE)


def newer_schema_error(database_file: Path, version: int) -> StoreError:
    return StoreError(
        f"{database_file} was written by a newer studyapp (schema {version}, this one knows "
        f"{SCHEMA_VERSION}); upgrade studyapp", StoreProblem.NEWER)


def _is_failure(exc: sqlite3.Error) -> bool:
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


@dataclass
class NoteRow:
    """A note as the database knows it; `key` stays the same across renames."""

    key: int
    path: str
    content_hash: str | None
    title: str | None
    deleted: bool


@dataclass
class CardRow:
    """FSRS state of one note (fields mirror `fsrs.Card`), plus what FSRS does not keep."""

    note_key: int
    state: int
    step: int | None
    stability: float | None
    difficulty: float | None
    due: datetime
    last_review: datetime | None
    suspended: bool = False
    reps: int = 0
    lapses: int = 0
    legacy: bool = False
    """Seeded from the previous tool's metadata rather than from our own reviews."""

    def to_json(self) -> str:
        data = dict(self.__dict__)
        data["due"] = utc_text(self.due)
        data["last_review"] = utc_text(self.last_review) if self.last_review else None
        return json.dumps(data)

    @classmethod
    def from_json(cls, text: str) -> CardRow:
        data = json.loads(text)
        data["due"] = parse_utc(data["due"])
        data["last_review"] = parse_utc(data["last_review"])
        return cls(**data)


@dataclass
class JournalEntry:
    """A file write whose database half has not committed yet (see `reviews.repair_pending`)."""

    id: int
    kind: str
    path: str
    hash_before: str | None
    hash_after: str | None
    payload: dict[str, Any]

    @property
    def owner(self) -> str | None:
        """The writing process (`locking.ProcessIdentity` as text); None in rows of old versions."""
        owner = self.payload.get("owner")
        return owner if isinstance(owner, str) else None


class Store:
    """One open connection to the review database."""

    def __init__(self, database_file: Path | str):
        self.database_file = Path(database_file)
        if str(database_file) != ":memory:":
            try:
                self.database_file.parent.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise StoreError(f"cannot create the data dir {self.database_file.parent}: "
                                 f"{exc.strerror or exc}", StoreProblem.UNAVAILABLE) from None
        conn = None
        try:
            self.conn = conn = sqlite3.connect(
                str(database_file), isolation_level=None, check_same_thread=False, timeout=10
            )
            self.conn.row_factory = sqlite3.Row
            self.conn.execute("PRAGMA journal_mode=WAL")
            # NORMAL in WAL mode survives a process crash (what the journal protects against);
            # only a power cut can lose the last commits, never corrupt the database.
            self.conn.execute("PRAGMA synchronous=NORMAL")
            self.conn.execute("PRAGMA foreign_keys=ON")
            self._migrate()
            self._ensure_database_id()
        except (sqlite3.Error, StoreError) as exc:
            if conn is not None:
                conn.close()
            if isinstance(exc, StoreError):
                raise
            raise store_error(exc, self.database_file) from exc
        self._depth = 0

    @classmethod
    def open(cls, paths) -> Store:
        """The database of a `Paths` (data_dir/studyapp.sqlite3)."""
        return cls(paths.database_file)

    def close(self) -> None:
        self.conn.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # -- schema -------------------------------------------------------------------------------

    @property
    def schema_version(self) -> int:
        return self.conn.execute("PRAGMA user_version").fetchone()[0]

    def _migrate(self) -> None:
        version = self.schema_version
        if version > SCHEMA_VERSION:
            raise newer_schema_error(self.database_file, version)
        for target in range(version + 1, SCHEMA_VERSION + 1):
            # executescript commits first, so the DDL and the version bump run as one script.
            self.conn.executescript(
                "BEGIN IMMEDIATE;\n"
                + MIGRATIONS[target - 1]
                + f"\nPRAGMA user_version = {target};\nCOMMIT;"
            )

    @property
    def database_id(self) -> int:
        """A random number given to each database when created (see `_ensure_database_id`)."""
        return self.conn.execute("PRAGMA application_id").fetchone()[0]

    def _ensure_database_id(self) -> None:
        """Give the database its id if it has none (one created afresh, or by an older studyapp).

        The id lives in SQLite's header field `application_id` (meant for a file-type tag that
        studyapp never used), so it needs no schema change and every copy of the file (a
        backup, a restore) keeps it, while a database created afresh gets another: that is how
        `history_guard` tells a replaced history from the one it knew.
        """
        if str(self.database_file) == ":memory:" or self.database_id:
            return
        import secrets

        try:
            self.conn.execute(f"PRAGMA application_id = {secrets.randbits(31) or 1}")
        except sqlite3.Error:
            pass  # read-only: it gets one when next opened writable

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """BEGIN IMMEDIATE … COMMIT, rolled back on any exception; nests as one transaction."""
        if self._depth:
            self._depth += 1
            try:
                yield self.conn
            finally:
                self._depth -= 1
            return
        try:
            self.conn.execute("BEGIN IMMEDIATE")
        except sqlite3.DatabaseError as exc:
            raise store_error(exc, self.database_file) from exc
        self._depth = 1
        try:
            yield self.conn
            self.conn.execute("COMMIT")
        except BaseException as exc:
            self._rollback()
            if isinstance(exc, sqlite3.Error) and _is_failure(exc):
                raise store_error(exc, self.database_file) from exc
            raise
        finally:
            self._depth = 0

    def _rollback(self) -> None:
        """Undo the open transaction, if SQLite has not already (it does on a full disk)."""
        if self.conn.in_transaction:
            try:
                self.conn.execute("ROLLBACK")
            except sqlite3.Error:
                pass

    # -- note identity --------------------------------------------------------------------------

    def note_by_path(self, path: str) -> NoteRow | None:
        """The live (not deleted) note at `path`."""
        row = self.conn.execute(
            "SELECT * FROM notes WHERE path = ? AND deleted = 0", (path,)
        ).fetchone()
        return _note(row) if row else None

    def note_by_key(self, key: int) -> NoteRow | None:
        row = self.conn.execute("SELECT * FROM notes WHERE key = ?", (key,)).fetchone()
        return _note(row) if row else None

    def live_notes(self) -> list[NoteRow]:
        return [_note(r) for r in self.conn.execute("SELECT * FROM notes WHERE deleted = 0")]

    def add_note(self, path: str, content_hash: str | None, title: str | None,
                 seen_at: datetime) -> int:
        with self.transaction():
            cur = self.conn.execute(
                "INSERT INTO notes(path, content_hash, title, first_seen) VALUES (?, ?, ?, ?)",
                (path, content_hash, title, utc_text(seen_at)),
            )
            return _inserted_key(cur)

    def add_notes(self, paths_and_titles: list[tuple[str, str | None]], seen_at: datetime) -> None:
        """`add_note` for many notes in one statement (a rebuild adds thousands)."""
        with self.transaction():
            self.conn.executemany(
                "INSERT INTO notes(path, content_hash, title, first_seen) VALUES (?, NULL, ?, ?)",
                [(path, title, utc_text(seen_at)) for path, title in paths_and_titles])

    def update_note(self, key: int, *, path: str | None = None, content_hash: str | None = None,
                    title: str | None = None, deleted: bool | None = None) -> None:
        changes = {k: v for k, v in (("path", path), ("content_hash", content_hash),
                                     ("title", title), ("deleted", deleted)) if v is not None}
        if not changes:
            return
        sets = ", ".join(f"{name} = ?" for name in changes)
        with self.transaction():
            self.conn.execute(f"UPDATE notes SET {sets} WHERE key = ?", (*changes.values(), key))

    # -- cards ---------------------------------------------------------------------------------

    def card(self, note_key: int) -> CardRow | None:
        row = self.conn.execute("SELECT * FROM cards WHERE note_key = ?", (note_key,)).fetchone()
        return _card(row) if row else None

    def cards(self) -> dict[int, CardRow]:
        """Every card of a live note, by note key."""
        rows = self.conn.execute(
            "SELECT c.* FROM cards c JOIN notes n ON n.key = c.note_key WHERE n.deleted = 0"
        )
        return {r["note_key"]: _card(r) for r in rows}

    def put_card(self, card: CardRow) -> None:
        with self.transaction():
            self.conn.execute(
                "INSERT OR REPLACE INTO cards(note_key, state, step, stability, difficulty, due,"
                " last_review, suspended, reps, lapses, legacy) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
                (card.note_key, card.state, card.step, card.stability, card.difficulty,
                 utc_text(card.due), utc_text(card.last_review) if card.last_review else None,
                 int(card.suspended), card.reps, card.lapses, int(card.legacy)),
            )

    def delete_card(self, note_key: int) -> None:
        with self.transaction():
            self.conn.execute("DELETE FROM cards WHERE note_key = ?", (note_key,))

    def set_suspended(self, note_key: int, suspended: bool) -> None:
        with self.transaction():
            self.conn.execute("UPDATE cards SET suspended = ? WHERE note_key = ?",
                              (int(suspended), note_key))

    # -- the review log ------------------------------------------------------------------------

    def insert_review(self, row: dict[str, Any], old_bytes: bytes | None = None) -> int:
        """Append one review (columns of `reviews`); keep `old_bytes` for an exact undo."""
        names = ", ".join(row)
        marks = ", ".join("?" for _ in row)
        with self.transaction():
            review_id = _inserted_key(self.conn.execute(
                f"INSERT INTO reviews({names}) VALUES ({marks})", tuple(row.values())
            ))
            if old_bytes is not None:
                self.conn.execute("INSERT INTO undo_bytes(review_id, content) VALUES (?, ?)",
                                  (review_id, old_bytes))
                self.conn.execute(
                    "DELETE FROM undo_bytes WHERE review_id NOT IN"
                    " (SELECT review_id FROM undo_bytes ORDER BY review_id DESC LIMIT ?)",
                    (UNDO_DEPTH,),
                )
            return review_id

    def has_reviews(self, note_key: int) -> bool:
        """Whether any logged review scheduled this note."""
        return self.conn.execute(
            "SELECT 1 FROM reviews WHERE note_key = ? LIMIT 1", (note_key,)).fetchone() is not None

    def last_review(self) -> sqlite3.Row | None:
        """The most recently recorded review (the one `undo` reverts)."""
        return self.conn.execute("SELECT * FROM reviews ORDER BY id DESC LIMIT 1").fetchone()

    def undo_bytes(self, review_id: int) -> bytes | None:
        row = self.conn.execute(
            "SELECT content FROM undo_bytes WHERE review_id = ?", (review_id,)
        ).fetchone()
        return None if row is None else bytes(row[0])

    def delete_review(self, review_id: int) -> None:
        with self.transaction():
            self.conn.execute("DELETE FROM reviews WHERE id = ?", (review_id,))

    def reviews(self, since: datetime | None = None) -> list[sqlite3.Row]:
        """The review log in time order (optionally from `since`)."""
        if since is None:
            return self.conn.execute("SELECT * FROM reviews ORDER BY reviewed_at, id").fetchall()
        return self.conn.execute(
            "SELECT * FROM reviews WHERE reviewed_at >= ? ORDER BY reviewed_at, id",
            (utc_text(since),),
        ).fetchall()

    def review_count(self) -> int:
        return self.conn.execute("SELECT COUNT(*) FROM reviews").fetchone()[0]

    def reviews_started_since(self, since: datetime) -> tuple[int, int]:
        """(new cards first reviewed, review-state reviews) since `since`, for daily limits."""
        row = self.conn.execute(
            "SELECT SUM(state_before IS NULL), SUM(state_before IS NOT NULL) FROM reviews"
            " WHERE reviewed_at >= ?",
            (utc_text(since),),
        ).fetchone()
        return int(row[0] or 0), int(row[1] or 0)

    # -- drills (used by the grader) -----------------------------------------------------------

    def record_drill_attempt(
        self,
        drill_id: str,
        verdict: str,
        *,
        summary: str = "",
        note_key: int | None = None,
        topic: str | None = None,
        duration_ms: int | None = None,
        file_path: str | None = None,
        attempted_at: datetime | None = None,
        event_id: str | None = None,
    ) -> int:
        """Log one graded submission of drill `drill_id` and return the attempt's id.

        `verdict` is "pass", "fail" (wrong answer) or "error" (did not run: syntax error,
        timeout, crash). `note_key`/`topic` tie it to a note or a tag when known; `attempted_at`
        defaults to now (UTC). The attempt counts towards `drill_status` and note mastery.
        """
        if verdict not in DRILL_VERDICTS:
            raise ValueError(f"verdict must be one of {DRILL_VERDICTS}, got {verdict!r}")
        when = attempted_at or datetime.now(timezone.utc)
        with self.transaction():
            return _inserted_key(self.conn.execute(
                "INSERT INTO drill_attempts(note_key, topic, drill_id, verdict, summary,"
                " attempted_at, duration_ms, file_path, event_id) VALUES (?,?,?,?,?,?,?,?,?)",
                (note_key, topic, drill_id, verdict, summary, utc_text(when), duration_ms,
                 None if file_path is None else str(file_path), event_id),
            ))

    def drill_status(self) -> dict[str, str]:
        """`{drill_id: "passed" | "failing"}` for every drill attempted at least once.

        A drill passed once stays "passed" (a later broken experiment does not undo having
        solved it, as in rustlings); attempted but never passed is "failing". Drills missing
        from the dict were never attempted ("not started").
        """
        rows = self.conn.execute(
            "SELECT drill_id, MAX(verdict = 'pass') FROM drill_attempts GROUP BY drill_id"
        )
        return {drill: "passed" if passed else "failing" for drill, passed in rows}

    def drill_attempts(self, drill_id: str | None = None) -> list[sqlite3.Row]:
        if drill_id is None:
            return self.conn.execute(
                "SELECT * FROM drill_attempts ORDER BY attempted_at, id").fetchall()
        return self.conn.execute(
            "SELECT * FROM drill_attempts WHERE drill_id = ? ORDER BY attempted_at, id",
            (drill_id,),
        ).fetchall()

    # == drill cards, reviews and try marks (`studyapp.drill_reviews`) ============ NEW BLOCK ==
    # Drills are review items keyed by drill id, in tables of their own (migration 3 -> 4).

    def drill_card(self, drill_id: str) -> CardRow | None:
        row = self.conn.execute("SELECT * FROM drill_cards WHERE drill_id = ?",
                                (drill_id,)).fetchone()
        return _drill_card(row) if row else None

    def drill_cards(self) -> dict[str, CardRow]:
        """Every drill's card, by drill id (drills never reviewed have none)."""
        return {r["drill_id"]: _drill_card(r) for r in self.conn.execute("SELECT * FROM drill_cards")}

    def put_drill_card(self, drill_id: str, card: CardRow) -> None:
        with self.transaction():
            self.conn.execute(
                "INSERT OR REPLACE INTO drill_cards(drill_id, state, step, stability, difficulty,"
                " due, last_review, suspended, reps, lapses) VALUES (?,?,?,?,?,?,?,?,?,?)",
                _drill_card_values(drill_id, card))

    def insert_drill_review(self, row: dict[str, Any]) -> int:
        names = ", ".join(row)
        marks = ", ".join("?" for _ in row)
        with self.transaction():
            return _inserted_key(self.conn.execute(
                f"INSERT INTO drill_reviews({names}) VALUES ({marks})", tuple(row.values())))

    def drill_reviews(self, drill_id: str | None = None) -> list[sqlite3.Row]:
        """Drill reviews in time order (of one drill, or all)."""
        if drill_id is None:
            return self.conn.execute(
                "SELECT * FROM drill_reviews ORDER BY reviewed_at, id").fetchall()
        return self.conn.execute(
            "SELECT * FROM drill_reviews WHERE drill_id = ? ORDER BY reviewed_at, id",
            (drill_id,)).fetchall()

    def last_drill_review_at(self, drill_id: str) -> datetime | None:
        row = self.conn.execute("SELECT MAX(reviewed_at) FROM drill_reviews WHERE drill_id = ?",
                                (drill_id,)).fetchone()
        return parse_utc(row[0]) if row and row[0] else None

    def drills_introduced_since(self, since: datetime) -> int:
        """Drills reviewed for the first time since `since` (the new-drill daily limit)."""
        return self.conn.execute(
            "SELECT COUNT(*) FROM drill_reviews WHERE state_before IS NULL AND reviewed_at >= ?",
            (utc_text(since),)).fetchone()[0]

    def add_drill_mark(self, drill_id: str, kind: str, at: datetime,
                       event_id: str | None = None) -> None:
        with self.transaction():
            self.conn.execute("INSERT INTO drill_marks(drill_id, kind, at, event_id)"
                              " VALUES (?,?,?,?)", (drill_id, kind, utc_text(at), event_id))

    def drill_marks(self, drill_id: str, since: datetime | None = None) -> list[DrillMark]:
        """A drill's marks (start, hint, giveup) in time order, from `since` when given."""
        rows = self.conn.execute(
            "SELECT kind, at, event_id FROM drill_marks WHERE drill_id = ? AND at >= ?"
            " ORDER BY at, id", (drill_id, utc_text(since) if since is not None else ""))
        return [DrillMark(drill_id, kind, datetime.fromisoformat(at), event_id)
                for kind, at, event_id in rows]

    def closed_tries(self, drill_id: str) -> set[str]:
        """Event ids of the start marks of the drill's tries that a review closed."""
        return {row[0] for row in self.conn.execute(
            "SELECT try_start FROM drill_reviews WHERE drill_id = ? AND try_start IS NOT NULL",
            (drill_id,))}

    def drill_attempt_counts(self) -> dict[str, tuple[int, int]]:
        """Drill id -> (graded runs passed, graded runs)."""
        return {row[0]: (int(row[1]), int(row[2])) for row in self.conn.execute(
            "SELECT drill_id, SUM(verdict = 'pass'), COUNT(*) FROM drill_attempts GROUP BY drill_id")}

    def replace_replayed_drills(self, cards: dict[str, CardRow], reviews: list[dict[str, Any]],
                                marks: list[tuple[str, str, str, str]]) -> None:
        """Swap the replayed drill cards, reviews and marks `(drill, kind, at, event id)` in."""
        with self.transaction():
            for table in ("drill_cards", "drill_reviews", "drill_marks"):
                self.conn.execute(f"DELETE FROM {table}")
            self.conn.executemany(
                "INSERT INTO drill_cards(drill_id, state, step, stability, difficulty, due,"
                " last_review, suspended, reps, lapses) VALUES (?,?,?,?,?,?,?,?,?,?)",
                [_drill_card_values(drill, card) for drill, card in cards.items()])
            if reviews:
                names = list(reviews[0])
                self.conn.executemany(
                    f"INSERT INTO drill_reviews({', '.join(names)}) VALUES"
                    f" ({', '.join('?' for _ in names)})", map(itemgetter(*names), reviews))
            self.conn.executemany(
                "INSERT INTO drill_marks(drill_id, kind, at, event_id) VALUES (?,?,?,?)", marks)

    # == end of the drill block ==================================================================

    # -- fitted parameters ---------------------------------------------------------------------

    def save_params(self, parameters: Iterable[float], fitted_at: datetime,
                    log_loss_before: float | None, log_loss_after: float | None,
                    review_count: int) -> None:
        with self.transaction():
            self.conn.execute(
                "INSERT INTO params(fitted_at, parameters, log_loss_before, log_loss_after,"
                " review_count) VALUES (?,?,?,?,?)",
                (utc_text(fitted_at), json.dumps([float(p) for p in parameters]),
                 log_loss_before, log_loss_after, review_count),
            )

    def latest_params(self) -> list[float] | None:
        """The most recently fitted FSRS parameters, or None to use the defaults."""
        row = self.conn.execute(
            "SELECT parameters FROM params ORDER BY id DESC LIMIT 1").fetchone()
        return None if row is None else json.loads(row[0])

    # -- the event log's cache bookkeeping (see `studyapp.history`) ---------------------------

    def log_sizes(self) -> dict[str, int]:
        """Bytes of each device's log file that the cache holds."""
        return {row[0]: row[1] for row in self.conn.execute("SELECT device, size FROM log_files")}

    def set_log_size(self, device: str, size: int) -> None:
        with self.transaction():
            self.conn.execute("INSERT OR REPLACE INTO log_files(device, size) VALUES (?, ?)",
                              (device, size))

    def unlogged_reviews(self, logged: set[str] | None = None) -> list[sqlite3.Row]:
        """Reviews the event log lacks, in order: recorded before it existed (no event id),
        and, given the ids the log holds, any other."""
        rows = self.conn.execute(
            "SELECT r.*, n.title FROM reviews r JOIN notes n ON n.key = r.note_key"
            + ("" if logged is not None else " WHERE r.event_id IS NULL")
            + " ORDER BY r.id").fetchall()
        if logged is None:
            return rows
        return [row for row in rows if row["event_id"] is None or row["event_id"] not in logged]

    def replace_replayed(self, cards: list[CardRow], reviews: list[dict[str, Any]],
                         attempts: list[dict[str, Any]], params: list[dict[str, Any]],
                         log_sizes: dict[str, int]) -> None:
        """Swap the replayed history in for the cached one, as one transaction.

        Undo bytes and note hashes (what an exact undo needs) follow their review by event id
        (review ids are renumbered in time order)."""
        with self.transaction():
            kept = {row[0]: bytes(row[1]) for row in self.conn.execute(
                "SELECT r.event_id, u.content FROM undo_bytes u JOIN reviews r"
                " ON r.id = u.review_id WHERE r.event_id IS NOT NULL")}
            hashes = {row[0]: (row[1], row[2]) for row in self.conn.execute(
                "SELECT event_id, hash_before, hash_after FROM reviews"
                " WHERE event_id IS NOT NULL AND hash_after IS NOT NULL")}
            for review in reviews:
                known = hashes.get(review["event_id"])
                if known is not None:
                    review["hash_before"], review["hash_after"] = known
            for table in ("undo_bytes", "reviews", "cards", "drill_attempts", "params",
                          "log_files"):
                self.conn.execute(f"DELETE FROM {table}")
            self.conn.executemany(
                "INSERT INTO cards(note_key, state, step, stability, difficulty, due,"
                " last_review, suspended, reps, lapses, legacy) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
                [(c.note_key, c.state, c.step, c.stability, c.difficulty, utc_text(c.due),
                  utc_text(c.last_review) if c.last_review else None, int(c.suspended),
                  c.reps, c.lapses, int(c.legacy)) for c in cards])
            # a bulk load, then the indexes built once, is several times faster than keeping
            # three indexes up to date row by row
            for index in _REVIEW_INDEXES:
                self.conn.execute(f"DROP INDEX IF EXISTS {index.split(' ON ')[0].split()[-1]}")
            if reviews:
                names = list(reviews[0])
                self.conn.executemany(
                    f"INSERT INTO reviews({', '.join(names)}) VALUES"
                    f" ({', '.join('?' for _ in names)})",
                    map(itemgetter(*names), reviews))
            for index in _REVIEW_INDEXES:
                self.conn.execute(index)
            if kept:
                self.conn.executemany(
                    "INSERT INTO undo_bytes(review_id, content) SELECT id, ? FROM reviews"
                    " WHERE event_id = ?", [(content, event) for event, content in kept.items()])
            self.conn.executemany(
                "INSERT INTO drill_attempts(note_key, topic, drill_id, verdict, summary,"
                " attempted_at, duration_ms, file_path, event_id) VALUES (?,?,?,?,?,?,?,?,?)",
                [(None, None, a["drill_id"], a["verdict"], a.get("summary", ""),
                  a["attempted_at"], a.get("duration_ms"), a.get("file_path"), a["event_id"])
                 for a in attempts])
            self.conn.executemany(
                "INSERT INTO params(fitted_at, parameters, log_loss_before, log_loss_after,"
                " review_count) VALUES (?,?,?,?,?)",
                [(p["fitted_at"], json.dumps(p["parameters"]), p.get("log_loss_before"),
                  p.get("log_loss_after"), p.get("review_count")) for p in params])
            self.conn.executemany("INSERT INTO log_files(device, size) VALUES (?, ?)",
                                  list(log_sizes.items()))

    # -- the write journal ---------------------------------------------------------------------

    def add_journal(self, kind: str, path: str, hash_before: str | None,
                    hash_after: str | None, payload: dict[str, Any], at: datetime) -> int:
        """Durably note a file write about to happen, before it happens."""
        with self.transaction():
            return _inserted_key(self.conn.execute(
                "INSERT INTO journal(kind, path, hash_before, hash_after, payload, created_at)"
                " VALUES (?,?,?,?,?,?)",
                (kind, path, hash_before, hash_after, json.dumps(payload), utc_text(at)),
            ))

    def set_journal_hash_after(self, entry_id: int, hash_after: str) -> None:
        with self.transaction():
            self.conn.execute("UPDATE journal SET hash_after = ? WHERE id = ?",
                              (hash_after, entry_id))

    def journal(self) -> list[JournalEntry]:
        return [
            JournalEntry(r["id"], r["kind"], r["path"], r["hash_before"], r["hash_after"],
                         json.loads(r["payload"]))
            for r in self.conn.execute("SELECT * FROM journal ORDER BY id")
        ]

    def clear_journal(self, entry_id: int) -> None:
        with self.transaction():
            self.conn.execute("DELETE FROM journal WHERE id = ?", (entry_id,))


def _inserted_key(cursor: sqlite3.Cursor) -> int:
    """The rowid an INSERT just made (sqlite3 types `lastrowid` optional, for other statements)."""
    key = cursor.lastrowid
    assert key is not None, "an INSERT always sets lastrowid"
    return key


@dataclass(frozen=True)
class DrillMark:
    """A moment of a try at a drill: its start, a hint shown, a give-up."""

    drill_id: str
    kind: str
    at: datetime
    event_id: str | None = None


def _drill_card(row: sqlite3.Row) -> CardRow:
    return CardRow(
        note_key=0, state=row["state"], step=row["step"], stability=row["stability"],
        difficulty=row["difficulty"], due=datetime.fromisoformat(row["due"]),
        last_review=parse_utc(row["last_review"]), suspended=bool(row["suspended"]),
        reps=row["reps"], lapses=row["lapses"])


def _drill_card_values(drill_id: str, card: CardRow) -> tuple:
    return (drill_id, card.state, card.step, card.stability, card.difficulty, utc_text(card.due),
            utc_text(card.last_review) if card.last_review else None, int(card.suspended),
            card.reps, card.lapses)


def _note(row: sqlite3.Row) -> NoteRow:
    return NoteRow(row["key"], row["path"], row["content_hash"], row["title"], bool(row["deleted"]))


def _card(row: sqlite3.Row) -> CardRow:
    return CardRow(
        note_key=row["note_key"], state=row["state"], step=row["step"],
        stability=row["stability"], difficulty=row["difficulty"], due=datetime.fromisoformat(row["due"]),
        last_review=parse_utc(row["last_review"]), suspended=bool(row["suspended"]),
        reps=row["reps"], lapses=row["lapses"], legacy=bool(row["legacy"]),
    )
