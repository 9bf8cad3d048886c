"""The review database: schema migrations, drill attempts, cards and the journal."""

from __future__ import annotations

import sqlite3
from datetime import datetime, timedelta, timezone

import pytest

from studyapp.store import (
    MIGRATIONS,
    SCHEMA_VERSION,
    CardRow,
    Store,
    StoreError,
)

T0 = datetime(2026, 3, 1, 9, 0, tzinfo=timezone.utc)


@pytest.fixture
def store(tmp_path):
    with Store(tmp_path / "db.sqlite3") as s:
        yield s


def test_new_database_is_at_the_latest_schema_in_wal_mode(store):
    assert store.schema_version == SCHEMA_VERSION
    assert store.conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert store.conn.execute("PRAGMA foreign_keys").fetchone()[0] == 1


def test_an_older_database_is_migrated_in_place_keeping_its_rows(tmp_path):
    path = tmp_path / "old.sqlite3"
    old = sqlite3.connect(path)
    old.executescript(MIGRATIONS[0] + "\nPRAGMA user_version = 1;")
    old.execute("INSERT INTO notes(path, content_hash, title, first_seen) VALUES"
                " ('a.md', 'h', 'A', '2026-01-01T00:00:00+00:00')")
    old.commit()
    old.close()

    with Store(path) as store:
        assert store.schema_version == SCHEMA_VERSION > 1
        assert store.note_by_path("a.md").title == "A"
        store.record_drill_attempt("sdpa", "pass", attempted_at=T0)  # v2 table exists
        assert store.drill_status() == {"sdpa": "passed"}


def test_a_version_6_database_keeps_its_attempts_with_nothing_known_of_what_they_graded(tmp_path):
    """Schema 7 adds what an attempt graded (`source_sha256`, `device`): an attempt recorded
    before has neither, so no later grade is taken for it graded again."""
    path = tmp_path / "v6.sqlite3"
    old = sqlite3.connect(path)
    old.executescript("\n".join(MIGRATIONS[:6]) + "\nPRAGMA user_version = 6;")
    old.execute("INSERT INTO drill_attempts(drill_id, verdict, summary, attempted_at, event_id)"
                " VALUES ('sdpa', 'fail', 'wrong', '2026-03-01T09:00:00+00:00', 'e1')")
    old.commit()
    old.close()

    with Store(path) as store:
        assert store.schema_version == SCHEMA_VERSION >= 7
        (before,) = store.drill_attempts("sdpa")
        assert (before.summary, before.event_id, before.source_sha256, before.device) == ("wrong", "e1", None, None)
        store.record_drill_attempt("sdpa", "pass", attempted_at=T0 + timedelta(days=1),
                                   source_sha256="ab" * 32, device="cpu")
        last = store.last_drill_attempt("sdpa")
        assert last is not None and (last.verdict, last.source_sha256, last.device) == ("pass", "ab" * 32, "cpu")
        assert store.last_drill_attempt("mha") is None


def test_a_newer_database_is_refused_not_downgraded(tmp_path):
    path = tmp_path / "new.sqlite3"
    conn = sqlite3.connect(path)
    conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    conn.close()
    with pytest.raises(StoreError, match="newer studyapp"):
        Store(path)


def test_drill_status_passed_once_stays_passed(store):
    store.record_drill_attempt("masks", "error", summary="syntax error", attempted_at=T0)
    store.record_drill_attempt("masks", "fail", attempted_at=T0 + timedelta(minutes=1))
    store.record_drill_attempt("sdpa", "fail", attempted_at=T0)
    store.record_drill_attempt("sdpa", "pass", attempted_at=T0 + timedelta(minutes=2))
    store.record_drill_attempt("sdpa", "fail", attempted_at=T0 + timedelta(minutes=3))
    assert store.drill_status() == {"masks": "failing", "sdpa": "passed"}
    attempts = store.drill_attempts("masks")
    assert [a.verdict for a in attempts] == ["error", "fail"]
    assert attempts[0].summary == "syntax error"


def test_drill_attempt_rejects_unknown_verdicts(store):
    with pytest.raises(ValueError):
        store.record_drill_attempt("sdpa", "passed")
    assert store.drill_status() == {}


def test_card_round_trip_and_suspend(store):
    key = store.add_note("t/x.md", "h1", "X", T0)
    card = CardRow(key, state=2, step=None, stability=12.5, difficulty=4.2,
                   due=T0 + timedelta(days=12), last_review=T0, reps=3, lapses=1)
    store.put_card(card)
    assert store.card(key) == card
    store.set_suspended(key, True)
    assert store.card(key).suspended
    assert CardRow.from_json(card.to_json()) == card


def test_live_path_is_unique_but_a_deleted_note_keeps_its_row(store):
    key = store.add_note("a.md", "h", "A", T0)
    with pytest.raises(sqlite3.IntegrityError):
        store.add_note("a.md", "h2", "A2", T0)
    store.update_note(key, deleted=True)
    assert store.note_by_path("a.md") is None
    new_key = store.add_note("a.md", "h2", "A2", T0)
    assert new_key != key and store.note_by_key(key).deleted


def test_transaction_rolls_back_everything_on_error(store):
    with pytest.raises(RuntimeError):
        with store.transaction():
            store.add_note("a.md", "h", "A", T0)
            raise RuntimeError("boom")
    assert store.note_by_path("a.md") is None


def test_undo_bytes_are_kept_only_for_recent_reviews(store, monkeypatch):
    monkeypatch.setattr("studyapp.store.UNDO_DEPTH", 2)
    key = store.add_note("a.md", "h", "A", T0)
    ids = [
        store.insert_review(
            {"note_key": key, "rating": 3, "reviewed_at": T0.isoformat(), "state_after": 2,
             "due_after": T0.isoformat(), "scheduled_days": 1, "path": "a.md"},
            old_bytes=f"v{i}".encode(),
        )
        for i in range(3)
    ]
    assert store.undo_bytes(ids[0]) is None
    assert store.undo_bytes(ids[2]) == b"v2"
    store.delete_review(ids[2])
    assert store.undo_bytes(ids[2]) is None  # cascades


def test_params_latest_wins(store):
    assert store.latest_params() is None
    store.save_params([0.1] * 21, T0, 0.4, 0.35, 900)
    store.save_params([0.2] * 21, T0 + timedelta(days=1), 0.35, 0.33, 1000)
    assert store.latest_params() == [0.2] * 21


def test_journal_round_trip(store):
    entry = store.add_journal("review", "a.md", "h0", None, {"rating": 3}, T0)
    store.set_journal_hash_after(entry, "h1")
    (pending,) = store.journal()
    assert (pending.path, pending.hash_before, pending.hash_after, pending.payload) == (
        "a.md", "h0", "h1", {"rating": 3})
    store.clear_journal(entry)
    assert store.journal() == []


def test_rows_come_out_as_typed_dataclasses_with_aware_instants(store):
    """Callers get dataclasses, never sqlite3.Rows: a misspelt column is an AttributeError at
    once, and an instant is a datetime, not text every caller parses its own way."""
    from studyapp.store import DrillAttempt, ReviewRow

    store.record_drill_attempt("sdpa", "fail", summary="values", attempted_at=T0, duration_ms=120)
    (attempt,) = store.drill_attempts()
    assert isinstance(attempt, DrillAttempt)
    assert (attempt.drill_id, attempt.verdict, attempt.summary, attempt.duration_ms) == ("sdpa", "fail", "values", 120)
    assert attempt.attempted_at == T0 and attempt.attempted_at.tzinfo is not None
    key = store.add_note("a.md", "h0", "A", T0)
    store.insert_review({"note_key": key, "rating": 3, "reviewed_at": "2026-03-01T09:00:00+00:00",
                         "state_after": 1, "due_after": "2026-03-01T09:10:00+00:00", "scheduled_days": 0.007,
                         "path": "a.md"})
    (review,) = store.reviews()
    assert isinstance(review, ReviewRow) and review == store.last_review() == store.review(review.id)
    assert review.reviewed_at == T0 and review.due_after == T0 + timedelta(minutes=10)
    assert review.state_before is None and review.due_before is None
    (unlogged,) = store.unlogged_reviews()
    assert unlogged.title == "A" and unlogged.id == review.id


def test_fitted_parameters_come_back_typed_oldest_first(store):
    store.save_params([0.1, 0.2], T0, 0.5, 0.4, 600)
    store.save_params([0.3], T0 + timedelta(days=1), None, None, 700)
    first, second = store.fitted_params()
    assert first.parameters == [0.1, 0.2] and first.fitted_at == T0 and first.review_count == 600
    assert second.log_loss_before is None and store.latest_params() == [0.3]


def test_only_the_store_runs_sql_on_the_review_database():
    """Every query lives in store.py: no other module reaches into a Store's connection."""
    from pathlib import Path

    import studyapp

    package = Path(studyapp.__file__).parent
    reaching = [str(path.relative_to(package)) for path in package.rglob("*.py")
                if path.name != "store.py" and ".conn." in path.read_text(encoding="utf-8")
                and "store" in path.read_text(encoding="utf-8")]
    assert reaching == []


def test_a_bulk_transaction_commits_or_rolls_back_and_gives_its_cache_back(store):
    default = store.conn.execute("PRAGMA cache_size").fetchone()[0]
    with store.bulk_transaction():
        assert store.conn.execute("PRAGMA cache_size").fetchone()[0] != default
        store.set_log_size("laptop", 10)
    assert store.log_sizes() == {"laptop": 10}
    with pytest.raises(RuntimeError), store.bulk_transaction():
        store.set_log_size("laptop", 99)
        raise RuntimeError("a replay failed half way")
    assert store.log_sizes() == {"laptop": 10}
    assert store.conn.execute("PRAGMA cache_size").fetchone()[0] == default
