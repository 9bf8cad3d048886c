"""`import-history anki` and `import-history osr` attacked with what real exports and hostile
files hold: media named as Anki writes them (URL-quoted, spaces, CJK, entities), reviews dated
after now, an imported note renamed before the next import, damaged media lists, duplicated
revlog ids, many small media that unpack to gigabytes, another writer holding the lock,
malformed OSR comments. Nothing tracebacks, double-counts or loses a review; a bad item is one
line and is left out, the rest imports."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
import zstandard
from history_helpers import card_states, review_log
from test_anki_import import collection_bytes

from studyapp.cli import main
from studyapp.history import anki
from studyapp.history.events import Event

NOW = "2026-06-01T10:00"
T0 = 1_767_254_400_000  # 2026-01-01T08:00Z, epoch ms
DAY = 86_400_000


def run(capsys, vault: Path, data: Path, *args: str, now: str = NOW) -> tuple[int, str, str]:
    """One command in-process: exit code, stdout, and stderr without the first-run notes."""
    capsys.readouterr()
    code = main([*args, "--vault", str(vault), "--data-dir", str(data), "--now", now])
    out, err = capsys.readouterr()
    err = "\n".join(line for line in err.splitlines() if not line.startswith("studyapp: note:"))
    assert "Traceback" not in out + err
    return code, out, err


def log_lines(vault: Path) -> list[dict]:
    lines = [json.loads(line) for path in sorted((vault / ".studyapp" / "log").glob("*.jsonl"))
             for line in path.read_text().splitlines() if line.strip()]
    for line in lines:
        Event.from_json(line)
    return lines


def apkg(tmp_path: Path, name: str, notes, cards, revlog=(), media=None, members=None,
         collection: bytes | None = None) -> Path:
    path = tmp_path / name
    if collection is None:
        collection = collection_bytes(tmp_path, notes=notes, cards=cards, revlog=list(revlog))
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("collection.anki2", collection)
        if media is not None:
            archive.writestr("media", media if isinstance(media, bytes) else json.dumps(media))
        for member, content in (members or {}).items():
            archive.writestr(member, content)
    return path


def md_files(vault: Path) -> list[str]:
    return sorted(p.relative_to(vault).as_posix() for p in vault.rglob("*.md")
                  if ".studyapp" not in p.parts)


# -- media names as Anki writes them ------------------------------------------------------------

def test_media_named_as_anki_writes_them_is_copied_and_linked(tmp_path, capsys):
    """Anki's editor writes an image as `<img src="{urllib.parse.quote(name)}">` (a space is
    %20, a Chinese name is %E5...) and a sound as `[sound:{html.escape(name)}]`; older notes and
    add-ons write the name raw or single-quoted; web clips keep remote images. Every file the
    notes use is copied under its own name, every link points at it, remote images stay."""
    vault, data = tmp_path / "vault", tmp_path / "data"
    vault.mkdir()
    front = ('Q <img src="my%20pic.png"> <img src="%E5%9B%BE.png"> <img src="raw 图.png">'
             " <img src='single quoted.png'> [sound:a&amp;b.mp3]"
             ' <img src="https://example.com/x.png">')
    names = ["my pic.png", "图.png", "raw 图.png", "single quoted.png", "a&b.mp3"]
    package = apkg(tmp_path, "media.apkg", notes=[(T0, "gm", "", front + "\x1fA")],
                   cards=[(10, T0, 0)], media={str(i): n for i, n in enumerate(names)},
                   members={str(i): n.encode() for i, n in enumerate(names)})
    code, out, err = run(capsys, vault, data, "import-history", "anki", str(package))
    assert code == 0 and not err, err
    assert "imported 1 note, 0 reviews and 5 media files" in out
    attachments = vault / "anki" / "attachments"
    assert sorted(os.listdir(attachments)) == sorted(names)
    for name in names:
        assert (attachments / name).read_bytes() == name.encode()
    text = (vault / "anki" / "Q.md").read_text()
    for link in ("![](attachments/my%20pic.png)", "![](attachments/图.png)",
                 "![](attachments/raw%20图.png)", "![](attachments/single%20quoted.png)",
                 "[a&b.mp3](attachments/a&b.mp3)", "![](https://example.com/x.png)"):
        assert link in text, text
    assert "attachments/https:" not in text


def test_a_media_file_a_note_uses_that_the_export_lacks_is_said(tmp_path, capsys):
    vault, data = tmp_path / "vault", tmp_path / "data"
    vault.mkdir()
    package = apkg(tmp_path, "lack.apkg", notes=[(T0, "gl", "", 'Q <img src="gone.png">\x1fA')],
                   cards=[(10, T0, 0)], media={})
    code, out, err = run(capsys, vault, data, "import-history", "anki", str(package))
    assert code == 0 and "imported 1 note" in out
    assert len(err.splitlines()) == 1 and "gone.png" in err, err


# -- review times ---------------------------------------------------------------------------------

def test_reviews_dated_after_now_are_left_out_and_said(tmp_path, capsys):
    """A phone with a wrong clock logs reviews in the future: imported, they made the note
    `last_reviewed` next year, and `rate` (and `optimize`) refused it until then."""
    vault, data = tmp_path / "vault", tmp_path / "data"
    vault.mkdir()
    package = apkg(tmp_path, "future.apkg", notes=[(T0, "gf", "", "Q1\x1fA"), (T0 + 1, "gg", "", "Q2\x1fA")],
                   cards=[(10, T0, 0), (20, T0 + 1, 0)],
                   revlog=[(T0 + 5, 10, 3, 1000, 1), (T0 + 400 * DAY, 10, 3, 1000, 1),
                           (T0 + 7, 20, 3, 1000, 1)])
    code, out, err = run(capsys, vault, data, "import-history", "anki", str(package))
    assert code == 0, err
    assert "imported 2 notes, 2 reviews" in out
    assert len(err.splitlines()) == 1 and "after" in err and "1 review" in err, err
    assert "2027" not in (vault / "anki" / "Q1.md").read_text()
    code, out, err = run(capsys, vault, data, "rate", "anki/Q1.md", "--rating", "good",
                         now="2026-06-02T10:00")
    assert code == 0, err
    code, out, err = run(capsys, vault, data, "import-history", "anki", str(package),
                         now="2026-06-02T11:00")
    assert code == 0 and "imported 0 notes, 0 reviews" in out
    assert len([r for r in review_log(data) if r[0] == "anki/Q1.md"]) == 2


def _no_pk_collection(tmp_path: Path, notes, cards, revlog) -> bytes:
    """A collection whose revlog has no primary key and no column types (a damaged or
    hand-made one): ids may repeat, values may be text."""
    db = tmp_path / "nopk.sqlite"
    db.unlink(missing_ok=True)
    with sqlite3.connect(db) as conn:
        conn.executescript(
            "CREATE TABLE notes (id integer primary key, guid text, mid integer, tags text,"
            " flds text); CREATE TABLE cards (id integer primary key, nid integer, ord integer);"
            "CREATE TABLE revlog (id, cid, ease, time, type);")
        conn.executemany("INSERT INTO notes VALUES (?, ?, 1, ?, ?)", notes)
        conn.executemany("INSERT INTO cards VALUES (?, ?, ?)", cards)
        conn.executemany("INSERT INTO revlog VALUES (?, ?, ?, ?, ?)", revlog)
    conn.close()
    return db.read_bytes()


def test_a_repeated_revlog_id_is_one_line_not_a_lost_review(tmp_path, capsys):
    """Two rows with one id became two events with one id: the replay kept one, the other was
    counted as imported and silently lost."""
    vault, data = tmp_path / "vault", tmp_path / "data"
    vault.mkdir()
    notes = [(T0, "g1", "", "Q1\x1fA"), (T0 + 1, "g2", "", "Q2\x1fA")]
    cards = [(10, T0, 0), (20, T0 + 1, 0)]
    revlog = [(T0 + 5, 10, 3, 1000, 1), (T0 + 5, 20, 3, 1000, 1), (T0 + DAY, 20, 3, 1000, 1)]
    package = apkg(tmp_path, "dup.apkg", None, None,
                   collection=_no_pk_collection(tmp_path, notes, cards, revlog))
    code, out, err = run(capsys, vault, data, "import-history", "anki", str(package))
    assert code == 0, err
    assert "imported 2 notes, 2 reviews" in out
    assert len(err.splitlines()) == 1 and "1 review-log row" in err, err
    assert len(review_log(data)) == 2


def test_revlog_rows_of_unreadable_types_are_counted(tmp_path, capsys):
    vault, data = tmp_path / "vault", tmp_path / "data"
    vault.mkdir()
    notes = [(T0, "g1", "", "Q1\x1fA")]
    revlog = [(T0 + 5, 10, 3, 1000, 1), (T0 + DAY, 10, "three", 1000, 1),
              (T0 + 2 * DAY, 10, 3, 1000, "review"), (T0 + 3 * DAY, 10, 9, 1000, 1),
              (T0 + 4 * DAY, 10, 0, 0, 4)]  # the last: a manual reschedule, no review, no line
    package = apkg(tmp_path, "types.apkg", None, None,
                   collection=_no_pk_collection(tmp_path, notes, [(10, T0, 0)], revlog))
    code, out, err = run(capsys, vault, data, "import-history", "anki", str(package))
    assert code == 0, err
    assert "imported 1 note, 1 review" in out
    assert len(err.splitlines()) == 1 and "3 review-log rows" in err, err


# -- an imported note renamed or moved before the next import ------------------------------------

@pytest.mark.parametrize("where", ["anki/renamed.md", "topics/Q1.md"], ids=["renamed", "moved"])
@pytest.mark.parametrize("noticed", [True, False], ids=["noticed", "unnoticed"])
def test_a_renamed_imported_note_keeps_one_history(tmp_path, capsys, where, noticed):
    """Import, rename the note (its title, its folder), keep reviewing in Anki, import the newer
    export: the new reviews joined the old ones (a second `anki/Q1.md` was written, or the new
    reviews went to the new path at times before the rename, which split the history)."""
    vault, data = tmp_path / "vault", tmp_path / "data"
    vault.mkdir()
    notes = [(T0, "g1", "", "Q1\x1fA"), (T0 + 1, "g2", "", "Q2\x1fA")]
    cards = [(10, T0, 0), (20, T0 + 1, 0)]
    first = [(T0 + 5, 10, 3, 1000, 1), (T0 + 7, 20, 3, 1000, 1)]
    older = apkg(tmp_path, "d1.apkg", notes, cards, first)
    newer = apkg(tmp_path, "d2.apkg", notes, cards,
                 [*first, (T0 + 3 * DAY, 10, 3, 1000, 1), (T0 + 100 * DAY, 10, 4, 1000, 1)])
    code, out, err = run(capsys, vault, data, "import-history", "anki", str(older),
                         now="2026-01-10T09:00")
    assert code == 0, err
    (vault / where).parent.mkdir(exist_ok=True)
    (vault / "anki" / "Q1.md").rename(vault / where)
    if noticed:
        run(capsys, vault, data, "due", now="2026-02-01T09:00")
    code, out, err = run(capsys, vault, data, "import-history", "anki", str(newer))
    assert code == 0, err
    assert "imported 0 notes, 2 reviews" in out, out
    assert md_files(vault) == sorted(["anki/Q2.md", where])
    assert [r[0] for r in review_log(data)].count(where) == 3, review_log(data)
    assert set(card_states(data)) == {"anki/Q2.md", where}
    assert "review_count: 3" in (vault / where).read_text()

    code, out, err = run(capsys, vault, data, "import-history", "anki", str(newer))
    assert code == 0 and "imported 0 notes, 0 reviews" in out
    code, out, err = run(capsys, vault, data, "sync", "--full")
    assert code == 0 and [r[0] for r in review_log(data)].count(where) == 3


# -- damaged media lists ------------------------------------------------------------------------

def _pb(number: int, wire: int, payload: bytes | int) -> bytes:
    if wire == 0:
        return bytes([number << 3 | 0, payload])  # type: ignore[list-item]
    assert isinstance(payload, bytes)
    return bytes([number << 3 | 2, len(payload)]) + payload


DAMAGED_LISTS = {
    "protobuf entry as a number": zstandard.ZstdCompressor().compress(_pb(1, 0, 5)),
    "protobuf wire type 3": zstandard.ZstdCompressor().compress(bytes([1 << 3 | 3, 0])),
    "json null": b"null",
    "json list": b'["a.png"]',
}


@pytest.mark.parametrize("listing", list(DAMAGED_LISTS.values()), ids=list(DAMAGED_LISTS))
def test_a_damaged_media_list_leaves_out_the_media_and_imports_the_rest(tmp_path, capsys, listing):
    vault, data = tmp_path / "vault", tmp_path / "data"
    vault.mkdir()
    package = apkg(tmp_path, "list.apkg", notes=[(T0, "g1", "", 'Q <img src="a.png">\x1fA')],
                   cards=[(10, T0, 0)], revlog=[(T0 + 5, 10, 3, 1000, 1)], media=listing,
                   members={"0": b"PNG"})
    code, out, err = run(capsys, vault, data, "import-history", "anki", str(package))
    assert code == 0, err
    assert "imported 1 note, 1 review and 0 media files" in out
    assert err and all(line.startswith("studyapp: warning:") for line in err.splitlines()), err
    assert "media list" in err


# -- many small media that unpack to far more ----------------------------------------------------

def test_media_that_unpack_to_far_more_than_the_export_stop_at_a_total(tmp_path, capsys, monkeypatch):
    """Each zstd media member of a few bytes unpacks to the per-file limit: 40 of them in a
    few kilobytes wrote 40 times that limit into the vault (with the real limit, 4 GB)."""
    monkeypatch.setattr(anki, "MAX_MEDIA_BYTES", 1 << 20)
    monkeypatch.setattr(anki, "MEDIA_TOTAL_FLOOR", 4 << 20, raising=False)
    vault, data = tmp_path / "vault", tmp_path / "data"
    vault.mkdir()
    zstd = zstandard.ZstdCompressor()
    count = 40
    names = [f"m{i:02d}.png" for i in range(count)]
    front = "".join(f'<img src="{n}">' for n in names)
    package = apkg(tmp_path, "bomb.apkg", notes=[(T0, "gb", "", f"Q{front}\x1fA")],
                   cards=[(10, T0, 0)], media={str(i): n for i, n in enumerate(names)},
                   members={str(i): zstd.compress(bytes([i]) * ((1 << 20) - 1))
                            for i in range(count)})
    assert package.stat().st_size < 64 << 10
    code, out, err = run(capsys, vault, data, "import-history", "anki", str(package))
    assert code == 0, err
    assert "imported 1 note" in out
    written = sum(p.stat().st_size for p in (vault / "anki" / "attachments").iterdir())
    assert written <= 5 << 20, written
    assert len(err.splitlines()) == 1 and "media" in err, err


# -- another writer holds the lock ----------------------------------------------------------------

def test_an_import_while_another_writer_holds_the_lock_changes_nothing(tmp_path, capsys, monkeypatch):
    """The import wrote its notes and log lines without the writer lock, then failed waiting
    for it to replay: the command said it failed and had imported half."""
    from studyapp import locking

    monkeypatch.setattr(locking.WriterLock.__init__, "__defaults__", (1.0,))
    vault, data = tmp_path / "vault", tmp_path / "data"
    vault.mkdir()
    package = apkg(tmp_path, "deck.apkg", notes=[(T0, "g1", "", "Q1\x1fA")], cards=[(10, T0, 0)],
                   revlog=[(T0 + 5, 10, 3, 1000, 1)])
    code, _, err = run(capsys, vault, data, "due")
    assert code == 0, err
    holder = subprocess.Popen(
        [sys.executable, "-c",
         "import fcntl, os, sys, time\n"
         "fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT)\n"
         "fcntl.flock(fd, fcntl.LOCK_EX)\n"
         "print('held', flush=True)\n"
         "time.sleep(30)\n", str(data / "writer.lock")], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        code, out, err = run(capsys, vault, data, "import-history", "anki", str(package))
    finally:
        holder.kill()
        holder.wait()
    assert code == 1 and "still writing" in err, (code, out, err)
    assert md_files(vault) == [] and not [line for line in log_lines(vault) if line["kind"] == "review"]
    code, out, err = run(capsys, vault, data, "import-history", "anki", str(package))
    assert code == 0 and "imported 1 note, 1 review" in out, err


# -- osr --------------------------------------------------------------------------------------------

GOOD = "---\nsr-due: 2026-01-05\nsr-interval: 12\nsr-ease: 250\n---\n# ok\nbody\n"


@pytest.mark.parametrize("comment", ["<!--SR:!2026-01-05,12-->", "<!--SR:2026-01-05,12,250-->",
                                     "<!--SR:!2026-01-05,twelve,250-->"])
def test_a_malformed_osr_comment_is_said_not_skipped_in_silence(tmp_path, capsys, comment):
    vault, data = tmp_path / "vault", tmp_path / "data"
    vault.mkdir()
    (vault / "good.md").write_text(GOOD)
    (vault / "odd.md").write_text(f"# odd\n\nanswer {comment}\n")
    code, out, err = run(capsys, vault, data, "import-history", "osr")
    assert code == 0, err
    assert "imported 1 note" in out and "1 with OSR values studyapp cannot use" in out, out
    assert len(err.splitlines()) == 1 and "odd.md" in err and "SR" in err, err


def test_an_osr_schedule_reviewed_after_now_is_left_out(tmp_path, capsys):
    """`sr-due: 2099-01-05` with a 12-day interval says the note was reviewed in 2098: imported,
    the note could not be rated before then (and was never due)."""
    vault, data = tmp_path / "vault", tmp_path / "data"
    vault.mkdir()
    (vault / "good.md").write_text(GOOD)
    (vault / "typo.md").write_text("---\nsr-due: 2099-01-05\nsr-interval: 12\nsr-ease: 250\n---\n# t\n")
    code, out, err = run(capsys, vault, data, "import-history", "osr")
    assert code == 0, err
    assert "imported 1 note" in out and "typo.md" in err
    code, out, err = run(capsys, vault, data, "rate", "typo.md", "--rating", "good")
    assert code == 0, err


def test_two_notes_with_one_guid_do_not_share_a_history(tmp_path, capsys):
    """Anki's guid is unique (Check Database gives a duplicate a new one): two notes with one
    guid were both written, and the next import credited the second one's new reviews to the
    first note's file."""
    vault, data = tmp_path / "vault", tmp_path / "data"
    vault.mkdir()
    notes = [(T0, "same", "", "First\x1fA"), (T0 + 1, "same", "", "Second\x1fB")]
    cards = [(10, T0, 0), (20, T0 + 1, 0)]
    older = apkg(tmp_path, "d1.apkg", notes, cards, [(T0 + 5, 10, 3, 1000, 1), (T0 + 7, 20, 3, 1000, 1)])
    newer = apkg(tmp_path, "d2.apkg", notes, cards, [(T0 + 5, 10, 3, 1000, 1), (T0 + 7, 20, 3, 1000, 1),
                                                      (T0 + DAY, 20, 1, 1000, 1)])
    code, out, err = run(capsys, vault, data, "import-history", "anki", str(older))
    assert code == 0 and "imported 1 note, 1 review" in out, (out, err)
    assert len(err.splitlines()) == 1 and "guid" in err and "Second" in err, err
    code, out, err = run(capsys, vault, data, "import-history", "anki", str(newer))
    assert code == 0 and "imported 0 notes, 0 reviews" in out, (out, err)
    assert [r[0] for r in review_log(data)] == ["anki/First.md"]
