"""`studyapp import-history anki`: an Anki export built here (legacy `collection.anki2` and
zstd-compressed `collection.anki21b`) becomes notes in the users' format, media in an
attachments folder, and review events whose replay gives the cards the reviews imply."""

from __future__ import annotations

import json
import sqlite3
import zipfile
from datetime import datetime, timezone
from pathlib import Path

import pytest
import zstandard
from fsrs import Rating
from history_helpers import card_states, cli, review_log

from studyapp.cli import main
from studyapp.config import Settings
from studyapp.history.anki import AnkiReview
from studyapp.history.replay import review_for_event
from studyapp.schedule import build_scheduler, new_card
from studyapp.store import utc_text

DAY_MS = 86_400_000
T0 = 1_767_254_400_000  # 2026-01-01T08:00Z in epoch ms, as Anki's ids are
PNG = b"\x89PNG\r\n\x1a\n fake image bytes"

NOTES = [  # id, guid, tags (Anki writes them space-separated and padded), fields
    (T0 - DAY_MS, "g-attn", " ml::attention interview ",
     "Why scale by <b>sqrt(d_k)</b>?\x1fDot products grow with d_k;<br>softmax saturates."
     '<img src="diagram.png">\x1fextra &amp; more'),
    (T0 - DAY_MS + 1, "g-kv", "", "KV cache\x1fKeep past keys and values."),
]
CARDS = [(100, NOTES[0][0], 0), (101, NOTES[0][0], 1), (200, NOTES[1][0], 0)]
REVLOG = [  # id (epoch ms), card, ease, time (ms), type
    (T0, 100, 1, 8000, 0),
    (T0 + 600_000, 100, 3, 5000, 0),
    (T0 + 2 * DAY_MS, 100, 3, 4000, 1),
    (T0 + 3 * DAY_MS, 100, 0, 0, 4),  # a manual reschedule: not a review
    (T0 + 9 * DAY_MS, 100, 2, 6000, 1),
    (T0 + 9 * DAY_MS + 5, 101, 3, 3000, 1),  # the reverse card: left out
    (T0 + DAY_MS, 200, 4, 2000, 0),
]


def collection_bytes(tmp_path: Path, notes=NOTES, cards=CARDS, revlog=REVLOG) -> bytes:
    """A SQLite file with the tables and columns of an Anki collection that the import reads."""
    db = tmp_path / f"col-{len(notes)}.sqlite"
    db.unlink(missing_ok=True)
    with sqlite3.connect(db) as conn:
        conn.executescript(
            "CREATE TABLE col (id integer primary key, crt integer, ver integer, models text);"
            "CREATE TABLE notes (id integer primary key, guid text, mid integer, tags text,"
            " flds text);"
            "CREATE TABLE cards (id integer primary key, nid integer, ord integer);"
            "CREATE TABLE revlog (id integer primary key, cid integer, ease integer,"
            " time integer, type integer);")
        conn.execute("INSERT INTO col VALUES (1, 0, 18, '{}')")
        conn.executemany("INSERT INTO notes VALUES (?, ?, 1, ?, ?)", notes)
        conn.executemany("INSERT INTO cards VALUES (?, ?, ?)", cards)
        conn.executemany("INSERT INTO revlog VALUES (?, ?, ?, ?, ?)", revlog)
    conn.close()
    return db.read_bytes()


def protobuf_media(names: list[str]) -> bytes:
    """`MediaEntries { repeated MediaEntry entries = 1 }` with each entry's `name = 1`."""
    def field(number: int, payload: bytes) -> bytes:
        assert len(payload) < 128
        return bytes([number << 3 | 2, len(payload)]) + payload
    return b"".join(field(1, field(1, name.encode()) + bytes([2 << 3, 3])) for name in names)


def make_legacy_apkg(tmp_path: Path) -> Path:
    path = tmp_path / "deck.apkg"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("collection.anki2", collection_bytes(tmp_path))
        archive.writestr("media", json.dumps({"0": "diagram.png"}))
        archive.writestr("0", PNG)
    return path


def make_anki21b_colpkg(tmp_path: Path) -> Path:
    """Newer exports: the collection and media zstd-compressed, the media list a protobuf, and
    an old-format stub beside them that must not be read."""
    zstd = zstandard.ZstdCompressor()
    stub = collection_bytes(tmp_path, notes=[(1, "stub", "", "Please update Anki\x1f")],
                            cards=[], revlog=[])
    path = tmp_path / "collection.colpkg"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("collection.anki2", stub)
        archive.writestr("collection.anki21b", zstd.compress(collection_bytes(tmp_path)))
        archive.writestr("media", zstd.compress(protobuf_media(["diagram.png"])))
        archive.writestr("0", zstd.compress(PNG))
    return path


def expected_cards() -> dict[int, tuple]:
    """Each note's first card replayed from a new card through FSRS, review by review."""
    scheduler = build_scheduler(Settings())
    result = {}
    for card_id in (100, 200):
        rows = [r for r in REVLOG if r[1] == card_id and r[2] in (1, 2, 3, 4) and r[4] != 4]
        card = None
        for revlog_id, _, ease, duration, _ in rows:
            review = AnkiReview(revlog_id, ease, duration)
            card = card or new_card(0, review.at)
            card = review_for_event(scheduler, card, Rating(ease), review.at, duration,
                                    review.event_id)
        result[card_id] = (card.state, round(card.stability, 9), round(card.difficulty, 9),
                           utc_text(card.due), len(rows))
    return result


def snapshot(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes()
            for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.mark.parametrize("make", [make_legacy_apkg, make_anki21b_colpkg])
def test_anki_export_becomes_notes_media_and_replayed_reviews(tmp_path, capsys, make):
    package = make(tmp_path)
    vault, data = tmp_path / "vault", tmp_path / "data"
    vault.mkdir()
    now = "2026-02-01T09:00"

    out = cli(capsys, vault, data, "import-history", "anki", str(package), "--dry-run", now=now)
    assert "would import 2 notes, 5 reviews and 1 media file" in out
    assert "1 review of further cards" in out
    assert not (vault / "anki").exists()

    out = cli(capsys, vault, data, "import-history", "anki", str(package), now=now)
    assert "imported 2 notes, 5 reviews and 1 media file" in out
    attn = (vault / "anki" / "Why scale by sqrt(d_k).md").read_text()
    head, body = attn.split("\n---\n", 1)
    assert "- ml/attention\n- interview" in head and "anki_guid: g-attn" in head
    assert "created: '2025-12-31'" in head and "review_count: 4" in head
    assert body.startswith("# Why scale by sqrt(d_k)?\n")
    answer = body.split("## 面试标准答案\n", 1)[1]
    assert "Dot products grow with d_k;\nsoftmax saturates.![](attachments/diagram.png)" in answer
    assert "extra & more" in answer
    assert (vault / "anki" / "attachments" / "diagram.png").read_bytes() == PNG
    assert "# KV cache\n" in (vault / "anki" / "KV cache.md").read_text()

    cards = card_states(data)
    wanted = expected_cards()
    for path, card_id in (("anki/Why scale by sqrt(d_k).md", 100), ("anki/KV cache.md", 200)):
        state, stability, difficulty, due, reviews = wanted[card_id]
        assert cards[path][0:1] + cards[path][2:5] == (state, stability, difficulty, due)
        assert sum(1 for row in review_log(data) if row[0] == path) == reviews

    before = snapshot(vault)
    out = cli(capsys, vault, data, "import-history", "anki", str(package), now=now)
    assert "imported 0 notes, 0 reviews and 0 media files" in out
    assert "2 note(s) and 5 review(s) already imported" in out
    assert snapshot(vault) == before


def test_anki_reviews_replay_again_after_the_database_is_deleted(tmp_path, capsys):
    package = make_legacy_apkg(tmp_path)
    vault, data = tmp_path / "vault", tmp_path / "data"
    vault.mkdir()
    cli(capsys, vault, data, "import-history", "anki", str(package), now="2026-02-01T09:00")
    first = card_states(data)
    for name in ("studyapp.sqlite3", "studyapp.sqlite3-wal", "studyapp.sqlite3-shm"):
        (data / name).unlink(missing_ok=True)
    cli(capsys, vault, data, "sync", now="2026-02-01T09:00")
    assert card_states(data) == first


def test_not_an_anki_export_is_one_clear_line(tmp_path, capsys):
    vault, data = tmp_path / "vault", tmp_path / "data"
    vault.mkdir()
    bogus = tmp_path / "deck.apkg"
    bogus.write_bytes(b"not a zip")
    empty = tmp_path / "empty.apkg"
    with zipfile.ZipFile(empty, "w") as archive:
        archive.writestr("readme.txt", "hello")
    for path in (bogus, empty, tmp_path / "missing.apkg"):
        capsys.readouterr()
        code = main(["import-history", "anki", str(path), "--vault", str(vault),
                     "--data-dir", str(data), "--now", "2026-02-01T09:00"])
        err = capsys.readouterr().err
        assert code != 0 and "Traceback" not in err
        errors = [line for line in err.splitlines() if not line.startswith("studyapp: note:")]
        assert len(errors) == 1 and errors[0].startswith("studyapp: error:"), err


def test_anki_review_times_are_the_revlog_ids():
    assert AnkiReview(T0, 3, 0).at == datetime(2026, 1, 1, 8, 0, tzinfo=timezone.utc)
