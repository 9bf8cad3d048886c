"""The review database's schema, as the list of migrations that build it.

Apart from `store.py` because a schema's history reads best alone: `MIGRATIONS[i]` upgrades a
database from version i to i + 1 (`PRAGMA user_version`), so an old database is brought
forward in place on open and never rebuilt. A change to the schema is a new entry at the end.
"""

from __future__ import annotations

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
    # 4 -> 5: a drill review keeps the card it started from, so `undo` can put it back.
    """
    ALTER TABLE drill_reviews ADD COLUMN card_before TEXT;
    """,
    # 5 -> 6: the vault this database serves (`vault_binding`): one row, none in a database
    # that has served no vault yet (or came from an older studyapp: it serves the next one).
    """
    CREATE TABLE vault (
        one INTEGER PRIMARY KEY CHECK (one = 1),
        id TEXT NOT NULL,
        path TEXT NOT NULL
    );
    """,
    # 6 -> 7: what a drill attempt graded (the SHA-256 of the source bytes, and cpu or cuda),
    # so a second grade of the same run (two watchers on one save) is not recorded again.
    # Kept in the database only, not the log: an attempt from before, or from a replay of another
    # device's events, has none and never matches.
    """
    ALTER TABLE drill_attempts ADD COLUMN source_sha256 TEXT;
    ALTER TABLE drill_attempts ADD COLUMN device TEXT;
    """,
    # 7 -> 8: the reviewer's UTC offset (seconds) at each review, as its event records it: the
    # statistics count a review on the reviewer's day, as the note's `last_reviewed` says, on
    # every device and after a move to another zone (NULL: an older row, this machine's day).
    """
    ALTER TABLE reviews ADD COLUMN utc_offset INTEGER;
    """,
)
SCHEMA_VERSION = len(MIGRATIONS)

_REVIEW_INDEXES = (
    "CREATE INDEX reviews_note ON reviews(note_key, reviewed_at)",
    "CREATE INDEX reviews_time ON reviews(reviewed_at)",
    "CREATE UNIQUE INDEX reviews_event ON reviews(event_id) WHERE event_id IS NOT NULL",
)
"""The review log's indexes as the migrations create them (`replace_replayed` rebuilds them)."""
