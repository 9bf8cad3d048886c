"""The review database: note identity, FSRS card state, the review log, drill attempts, fitted
parameters, and a journal that makes a review's file write and database rows one unit.

Plain stdlib `sqlite3` in WAL mode with foreign keys on. This is the only module that runs SQL
on it; callers get typed rows (`store_rows`), never `sqlite3.Row`s. The schema and its
migrations live in `store_schema`, the translation of failures into one line in `store_errors`
(both re-exported here). One `Store` keeps one connection open: the TUI records reviews in a loop.

`Store` stays one class in one file (~800 lines) because it is the one place that runs SQL on
this database: the review log, the journal and the replayed history share transactions, and
keeping every query together is what lets a test check that no other module runs one.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timezone
from operator import itemgetter
from pathlib import Path
from typing import Any

from studyapp.store_errors import (
    ForeignDatabase,
    StoreError,
    StoreProblem,
    foreign_tables,
    is_failure,
    newer_schema_error,
    store_error,
)
from studyapp.store_rows import (
    R_EVENT_ID,
    R_HASH_AFTER,
    R_HASH_BEFORE,
    REVIEW_COLUMNS,
    CardRow,
    DrillAttempt,
    DrillReviewRow,
    FittedParams,
    JournalEntry,
    NoteRow,
    ReviewRow,
    card_from_sql,
    note_from_sql,
    parse_utc,
    utc_text,
)
from studyapp.store_schema import _REVIEW_INDEXES, MIGRATIONS, SCHEMA_VERSION

__all__ = [
    "MIGRATIONS", "SCHEMA_VERSION", "CardRow", "DrillAttempt", "DrillReviewRow", "FittedParams", "JournalEntry",
    "NoteRow", "ReviewRow", "Store", "VaultBinding", "StoreError", "StoreProblem", "newer_schema_error",
    "parse_utc", "store_error", "utc_text",
]

UNDO_DEPTH = 50
BULK_CACHE_KIB = 64 * 1024
"""SQLite's page cache while a replay is written (the default is 2 MiB), for that connection."""
"""How many recent reviews keep the note's old bytes for an exact undo."""

DRILL_VERDICTS = ("pass", "fail", "error")


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
            if tables := foreign_tables(self.conn):
                raise ForeignDatabase(self.database_file, tables)  # before WAL mode changes its header
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
            try:
                self.conn.executescript(
                    "BEGIN IMMEDIATE;\n"
                    + MIGRATIONS[target - 1]
                    + f"\nPRAGMA user_version = {target};\nCOMMIT;"
                )
            except sqlite3.Error:
                self._rollback()
                if self.schema_version < target:
                    raise
                # another process (two first commands at once) migrated it since the version
                # was read: running its DDL again failed ("duplicate column name")

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
    def bulk_transaction(self) -> Iterator[sqlite3.Connection]:
        """A transaction that writes a whole replay: the pages of a 100,000-review table and
        its indexes stay in memory until the commit instead of spilling to the journal on the
        way (a tenth of the writing); the cache shrinks back after it."""
        default = self.conn.execute("PRAGMA cache_size").fetchone()[0]
        self.conn.execute(f"PRAGMA cache_size = {-BULK_CACHE_KIB}")
        try:
            with self.transaction() as conn:
                yield conn
        finally:
            self.conn.execute(f"PRAGMA cache_size = {int(default)}")

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
            if isinstance(exc, sqlite3.Error) and is_failure(exc):
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
        return note_from_sql(row) if row else None

    def card_by_path(self, path: str) -> CardRow | None:
        """The stored card of the live note at `path`, if it has one."""
        row = self.note_by_path(path)
        return self.card(row.key) if row is not None else None

    def note_by_key(self, key: int) -> NoteRow | None:
        row = self.conn.execute("SELECT * FROM notes WHERE key = ?", (key,)).fetchone()
        return note_from_sql(row) if row else None

    def live_notes(self) -> list[NoteRow]:
        return [note_from_sql(r) for r in self.conn.execute("SELECT * FROM notes WHERE deleted = 0")]

    def live_paths_and_titles(self) -> list[tuple[str, str | None]]:
        """(path, title) of every live note: what a load checks renames by, without whole rows."""
        return self.conn.execute("SELECT path, title FROM notes WHERE deleted = 0").fetchall()

    def deleted_notes(self) -> list[NoteRow]:
        """The newest note marked deleted at each path."""
        return [note_from_sql(r) for r in self.conn.execute(
            "SELECT * FROM notes WHERE key IN (SELECT MAX(key) FROM notes WHERE deleted = 1 GROUP BY path)")]

    def add_note(self, path: str, content_hash: str | None, title: str | None,
                 seen_at: datetime) -> int:
        with self.transaction():
            cur = self.conn.execute(
                "INSERT INTO notes(path, content_hash, title, first_seen) VALUES (?, ?, ?, ?)",
                (path, content_hash, title, utc_text(seen_at)),
            )
            return _inserted_key(cur)

    def add_notes(self, paths_and_titles: list[tuple[str, str | None]], seen_at: datetime,
                  deleted: bool = False) -> None:
        """`add_note` for many notes in one statement (a rebuild adds thousands); `deleted`:
        notes that are gone, whose history the log still holds."""
        with self.transaction():
            self.conn.executemany(
                "INSERT INTO notes(path, content_hash, title, first_seen, deleted) VALUES (?, NULL, ?, ?, ?)",
                [(path, title, utc_text(seen_at), int(deleted)) for path, title in paths_and_titles])

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
        return card_from_sql(row) if row else None

    def cards(self) -> dict[int, CardRow]:
        """Every card of a live note, by note key."""
        rows = self.conn.execute(
            "SELECT c.* FROM cards c JOIN notes n ON n.key = c.note_key WHERE n.deleted = 0"
        )
        return {r["note_key"]: card_from_sql(r) for r in rows}

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

    def last_review(self) -> ReviewRow | None:
        """The most recently recorded review (the one `undo` reverts)."""
        row = self.conn.execute("SELECT * FROM reviews ORDER BY id DESC LIMIT 1").fetchone()
        return None if row is None else ReviewRow.from_sql(row)

    def newest_reviews(self) -> Iterator[ReviewRow]:
        """Every review, the most recently recorded first (`undo` looks for this device's)."""
        for row in self.conn.execute("SELECT * FROM reviews ORDER BY id DESC"):
            yield ReviewRow.from_sql(row)

    def review_by_id(self, review_id: int) -> ReviewRow | None:
        row = self.conn.execute("SELECT * FROM reviews WHERE id = ?", (review_id,)).fetchone()
        return None if row is None else ReviewRow.from_sql(row)

    def last_review_of(self, note_key: int) -> ReviewRow | None:
        """The note's most recently recorded review."""
        row = self.conn.execute("SELECT * FROM reviews WHERE note_key = ? ORDER BY id DESC LIMIT 1",
                                (note_key,)).fetchone()
        return None if row is None else ReviewRow.from_sql(row)

    def reviews_still_logged(self, event_ids: Iterable[str]) -> set[str]:
        """Which of these review events still have their review row: an undo (here, in another
        process, or replayed from another device's log) removes it; a rebuild keeps the ids."""
        wanted = list(dict.fromkeys(event_ids))
        found: set[str] = set()
        for start in range(0, len(wanted), 500):  # under SQLite's limit on parameters
            chunk = wanted[start:start + 500]
            marks = ", ".join("?" for _ in chunk)
            found.update(row[0] for row in self.conn.execute(
                f"SELECT event_id FROM reviews WHERE event_id IN ({marks})", chunk))
        return found

    def review(self, review_id: int) -> ReviewRow | None:
        row = self.conn.execute("SELECT * FROM reviews WHERE id = ?", (review_id,)).fetchone()
        return None if row is None else ReviewRow.from_sql(row)

    def undo_bytes(self, review_id: int) -> bytes | None:
        row = self.conn.execute(
            "SELECT content FROM undo_bytes WHERE review_id = ?", (review_id,)
        ).fetchone()
        return None if row is None else bytes(row[0])

    def delete_review(self, review_id: int) -> None:
        with self.transaction():
            self.conn.execute("DELETE FROM reviews WHERE id = ?", (review_id,))

    def reviews(self, since: datetime | None = None, until: datetime | None = None) -> list[ReviewRow]:
        """The review log in time order (optionally from `since`, up to and including `until`:
        statistics under a frozen clock leave out the reviews after it)."""
        where, args = _time_range(since, until)
        rows = self.conn.execute(f"SELECT * FROM reviews{where} ORDER BY reviewed_at, id", args)
        return [ReviewRow.from_sql(row) for row in rows]

    def review_times(self, since: datetime | None = None, until: datetime | None = None) -> list[datetime]:
        """Just the instants of `reviews(since, until)`."""
        return [at for at, _offset in self.review_moments(since, until)]

    def review_moments(self, since: datetime | None = None,
                       until: datetime | None = None) -> list[tuple[datetime, int | None]]:
        """(instant, the reviewer's UTC offset) of `reviews(since, until)`: a long streak looks
        further back than the statistics' year without reading whole rows."""
        where, args = _time_range(since, until)
        rows = self.conn.execute(
            f"SELECT reviewed_at, utc_offset FROM reviews{where} ORDER BY reviewed_at", args)
        return [(parse_utc(at), offset) for at, offset in rows]

    def data_version(self) -> int:
        """SQLite's `data_version`: it changes when another connection (another studyapp
        process: `rate-drill`, `undo`) commits, never for this connection's own writes."""
        return self.conn.execute("PRAGMA data_version").fetchone()[0]

    def review_count(self, until: datetime | None = None) -> int:
        """Reviews in the log (up to and including `until`)."""
        where, args = _time_range(None, until)
        return self.conn.execute(f"SELECT COUNT(*) FROM reviews{where}", args).fetchone()[0]

    def reviews_started_since(self, since: datetime, until: datetime | None = None) -> tuple[int, int]:
        """(new cards first reviewed, review-state reviews) from `since` and before `until`
        (when given: a day's window leaves out reviews stamped on a later day), for daily limits."""
        bound, args = ("", (utc_text(since),)) if until is None else (
            " AND reviewed_at < ?", (utc_text(since), utc_text(until)))
        row = self.conn.execute(
            "SELECT SUM(state_before IS NULL), SUM(state_before IS NOT NULL) FROM reviews"
            " WHERE reviewed_at >= ?" + bound, args,
        ).fetchone()
        return int(row[0] or 0), int(row[1] or 0)

    # -- drill attempts (recorded after each grade) ---------------------------------------------

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
        source_sha256: str | None = None,
        device: str | None = None,
    ) -> int:
        """Log one graded submission of drill `drill_id` and return the attempt's id.

        `verdict` is "pass", "fail" (wrong answer) or "error" (did not run: syntax error,
        timeout, crash). `note_key`/`topic` tie it to a note or a tag when known; `attempted_at`
        defaults to now (UTC); `source_sha256`/`device`: what was graded, where. The attempt
        counts towards `drill_status` and note mastery.
        """
        if verdict not in DRILL_VERDICTS:
            raise ValueError(f"verdict must be one of {DRILL_VERDICTS}, got {verdict!r}")
        when = attempted_at or datetime.now(timezone.utc)
        with self.transaction():
            return _inserted_key(self.conn.execute(
                "INSERT INTO drill_attempts(note_key, topic, drill_id, verdict, summary, attempted_at,"
                " duration_ms, file_path, event_id, source_sha256, device) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
                (note_key, topic, drill_id, verdict, summary, utc_text(when), duration_ms,
                 None if file_path is None else str(file_path), event_id, source_sha256, device),
            ))

    def last_drill_attempt(self, drill_id: str) -> DrillAttempt | None:
        """The drill's latest attempt (in the order of `drill_attempts`), or None."""
        row = self.conn.execute(
            "SELECT * FROM drill_attempts WHERE drill_id = ? ORDER BY attempted_at DESC, id DESC"
            " LIMIT 1", (drill_id,)).fetchone()
        return DrillAttempt.from_sql(row) if row else None

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

    def drill_attempts(self, drill_id: str | None = None) -> list[DrillAttempt]:
        """Attempts in time order, of one drill or of all."""
        if drill_id is None:
            rows = self.conn.execute("SELECT * FROM drill_attempts ORDER BY attempted_at, id")
        else:
            rows = self.conn.execute(
                "SELECT * FROM drill_attempts WHERE drill_id = ? ORDER BY attempted_at, id",
                (drill_id,))
        return [DrillAttempt.from_sql(row) for row in rows]

    def reviewed_paths(self) -> set[str]:
        """Paths of the notes with at least one review (the drills they pair with may start)."""
        return {row[0] for row in self.conn.execute(
            "SELECT DISTINCT n.path FROM reviews r JOIN notes n ON n.key = r.note_key")}

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

    def drill_reviews(self, drill_id: str | None = None) -> list[DrillReviewRow]:
        """Drill reviews in time order (of one drill, or all)."""
        if drill_id is None:
            rows = self.conn.execute("SELECT * FROM drill_reviews ORDER BY reviewed_at, id")
        else:
            rows = self.conn.execute(
                "SELECT * FROM drill_reviews WHERE drill_id = ? ORDER BY reviewed_at, id", (drill_id,))
        return [DrillReviewRow.from_sql(row) for row in rows]

    def last_drill_review(self) -> DrillReviewRow | None:
        """The most recently recorded drill review (the one `undo` reverts when it is newer
        than the last note review)."""
        row = self.conn.execute("SELECT * FROM drill_reviews ORDER BY id DESC LIMIT 1").fetchone()
        return None if row is None else DrillReviewRow.from_sql(row)

    def newest_drill_reviews(self) -> Iterator[DrillReviewRow]:
        for row in self.conn.execute("SELECT * FROM drill_reviews ORDER BY id DESC"):
            yield DrillReviewRow.from_sql(row)

    def last_drill_review_of(self, drill_id: str) -> DrillReviewRow | None:
        row = self.conn.execute("SELECT * FROM drill_reviews WHERE drill_id = ? ORDER BY id DESC"
                                " LIMIT 1", (drill_id,)).fetchone()
        return None if row is None else DrillReviewRow.from_sql(row)

    def remove_drill_review(self, review_id: int, drill_id: str, card_before: CardRow | None) -> None:
        """Undo a drill review: its row goes and the drill's card is the one it started from
        (none for a drill never reviewed before it)."""
        with self.transaction():
            self.conn.execute("DELETE FROM drill_reviews WHERE id = ?", (review_id,))
            if card_before is None:
                self.conn.execute("DELETE FROM drill_cards WHERE drill_id = ?", (drill_id,))
            else:
                self.put_drill_card(drill_id, card_before)

    def last_drill_review_at(self, drill_id: str) -> datetime | None:
        row = self.conn.execute("SELECT MAX(reviewed_at) FROM drill_reviews WHERE drill_id = ?",
                                (drill_id,)).fetchone()
        return parse_utc(row[0]) if row and row[0] else None

    def drills_introduced_since(self, since: datetime, until: datetime | None = None) -> int:
        """Drills reviewed for the first time from `since` and before `until` (when given), for
        the new-drill daily limit."""
        bound, args = ("", (utc_text(since),)) if until is None else (
            " AND reviewed_at < ?", (utc_text(since), utc_text(until)))
        return self.conn.execute(
            "SELECT COUNT(*) FROM drill_reviews WHERE state_before IS NULL AND reviewed_at >= ?"
            + bound, args).fetchone()[0]

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

    def fitted_params(self) -> list[FittedParams]:
        """Every fit, oldest first."""
        return [FittedParams.from_sql(row) for row in self.conn.execute("SELECT * FROM params ORDER BY id")]

    # -- the event log's cache bookkeeping (see `studyapp.history`) ---------------------------

    def log_sizes(self) -> dict[str, int]:
        """Bytes of each device's log file that the cache holds."""
        return {row[0]: row[1] for row in self.conn.execute("SELECT device, size FROM log_files")}

    def set_log_size(self, device: str, size: int) -> None:
        with self.transaction():
            self.conn.execute("INSERT OR REPLACE INTO log_files(device, size) VALUES (?, ?)",
                              (device, size))

    def unlogged_reviews(self, logged: set[str] | None = None) -> list[ReviewRow]:
        """Reviews the event log lacks, in order (with their note's title): recorded before it
        existed (no event id), and, given the ids the log holds, any other."""
        rows = [ReviewRow.from_sql(row) for row in self.conn.execute(
            "SELECT r.*, n.title FROM reviews r JOIN notes n ON n.key = r.note_key"
            + ("" if logged is not None else " WHERE r.event_id IS NULL")
            + " ORDER BY r.id")]
        if logged is None:
            return rows
        return [row for row in rows if row.event_id is None or row.event_id not in logged]

    def unlogged_attempts(self, logged: set[str] | None = None) -> list[DrillAttempt]:
        """Drill attempts the event log lacks, in order, as `unlogged_reviews` counts them."""
        return [attempt for attempt in map(DrillAttempt.from_sql, self.conn.execute(
            "SELECT * FROM drill_attempts ORDER BY id"))
            if attempt.event_id is None or (logged is not None and attempt.event_id not in logged)]

    def replace_replayed(self, cards: list[CardRow], reviews: list[list[Any]],
                         attempts: list[dict[str, Any]], params: list[dict[str, Any]],
                         log_sizes: dict[str, int]) -> None:
        """Swap the replayed history in for the cached one, as one transaction. `reviews`:
        rows in the order of `REVIEW_COLUMNS`.

        Undo bytes and note hashes (what an exact undo needs) follow their review by event id
        (review ids are renumbered in time order), and so does what a drill attempt graded."""
        with self.transaction():
            kept = {row[0]: bytes(row[1]) for row in self.conn.execute(
                "SELECT r.event_id, u.content FROM undo_bytes u JOIN reviews r"
                " ON r.id = u.review_id WHERE r.event_id IS NOT NULL")}
            hashes = {row[0]: (row[1], row[2]) for row in self.conn.execute(
                "SELECT event_id, hash_before, hash_after FROM reviews"
                " WHERE event_id IS NOT NULL AND hash_after IS NOT NULL")}
            if hashes:
                for review in reviews:
                    known = hashes.get(review[R_EVENT_ID])
                    if known is not None:
                        review[R_HASH_BEFORE], review[R_HASH_AFTER] = known
            graded = {row[0]: (row[1], row[2]) for row in self.conn.execute(
                "SELECT event_id, source_sha256, device FROM drill_attempts"
                " WHERE event_id IS NOT NULL AND source_sha256 IS NOT NULL")}
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
            self.conn.executemany(
                f"INSERT INTO reviews({', '.join(REVIEW_COLUMNS)}) VALUES"
                f" ({', '.join('?' for _ in REVIEW_COLUMNS)})", reviews)
            for index in _REVIEW_INDEXES:
                self.conn.execute(index)
            if kept:
                self.conn.executemany(
                    "INSERT INTO undo_bytes(review_id, content) SELECT id, ? FROM reviews"
                    " WHERE event_id = ?", [(content, event) for event, content in kept.items()])
            self.conn.executemany(  # what an attempt graded follows it by event id, as hashes do
                "INSERT INTO drill_attempts(note_key, topic, drill_id, verdict, summary, attempted_at,"
                " duration_ms, file_path, event_id, source_sha256, device) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
                [(None, None, a["drill_id"], a["verdict"], a.get("summary", ""),
                  a["attempted_at"], a.get("duration_ms"), a.get("file_path"), a["event_id"],
                  *graded.get(a["event_id"], (None, None)))
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


    # -- the vault this database serves (`vault_binding`) -------------------------------------

    def bound_vault(self) -> VaultBinding | None:
        row = self.conn.execute("SELECT id, path FROM vault").fetchone()
        return None if row is None else VaultBinding(row[0], row[1])

    def bind_vault(self, binding: VaultBinding) -> None:
        with self.transaction():
            self.conn.execute("INSERT OR REPLACE INTO vault(one, id, path) VALUES (1, ?, ?)",
                              (binding.id, binding.path))

    def holds_history(self) -> bool:
        """Whether anything here came from a review, a drill or a fit (an empty cache of a
        vault's notes holds none, and can serve another vault as it is)."""
        return any(self.conn.execute(f"SELECT EXISTS (SELECT 1 FROM {table})").fetchone()[0]
                   for table in _HISTORY_TABLES)

    def start_afresh(self, binding: VaultBinding) -> None:
        """Empty every table, in one transaction, and serve `binding`'s vault: other processes
        with the file open see an empty history, never a half-emptied one. A new database id
        tells the markers it is another history (`history_guard`)."""
        import secrets

        with self.transaction():
            for table in (*_HISTORY_TABLES, "undo_bytes", "log_files", "notes"):
                self.conn.execute(f"DELETE FROM {table}")  # noqa: S608 - fixed table names
            self.conn.execute("INSERT OR REPLACE INTO vault(one, id, path) VALUES (1, ?, ?)",
                              (binding.id, binding.path))
            self.conn.execute(f"PRAGMA application_id = {secrets.randbits(31) or 1}")


_HISTORY_TABLES = ("reviews", "drill_reviews", "drill_marks", "drill_attempts", "params",
                   "journal", "cards", "drill_cards")
"""Children before the tables they reference (`notes`): the order `start_afresh` empties them."""


@dataclass(frozen=True)
class VaultBinding:
    """The vault a database serves: its id (`markers.VaultMarker`) and where it was last."""

    id: str
    path: str


def _time_range(since: datetime | None, until: datetime | None) -> tuple[str, tuple[str, ...]]:
    """A WHERE clause on `reviewed_at` (stored as `utc_text`, whose text order is time order)."""
    conditions, args = [], []
    if since is not None:
        conditions.append("reviewed_at >= ?")
        args.append(utc_text(since))
    if until is not None:
        conditions.append("reviewed_at <= ?")
        args.append(utc_text(until))
    return (" WHERE " + " AND ".join(conditions) if conditions else ""), tuple(args)


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


