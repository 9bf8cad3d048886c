"""The metadata cache: a second load reads only files that changed (counted, not timed)."""

from __future__ import annotations

import os

from vault_fixtures import USERS_NOTE, write

from studyapp.vault import Vault

OLD_NS = 1_700_000_000_000_000_000  # files older than the racy-mtime window


def make(tmp_path, n=5):
    vault = tmp_path / "vault"
    for i in range(n):
        path = write(vault / "主题" / f"n{i}.md", USERS_NOTE.replace("review_count: 0", f"review_count: {i}"))
        os.utime(path, ns=(OLD_NS, OLD_NS))
    return vault


def test_second_load_parses_only_changed_files(tmp_path):
    vault_dir = make(tmp_path)
    cache = tmp_path / "data" / "cache.sqlite3"
    first = Vault(vault_dir, cache).load()
    assert (first.parsed, first.reused) == (5, 0)
    second = Vault(vault_dir, cache).load()
    assert (second.parsed, second.reused) == (0, 5)
    assert [(n.path, n.title, n.review_count, n.meta, n.content_hash) for n in second.notes] == \
           [(n.path, n.title, n.review_count, n.meta, n.content_hash) for n in first.notes]
    assert second.notes[0].answer == first.notes[0].answer  # read lazily from disk

    changed = vault_dir / "主题" / "n3.md"
    changed.write_text(USERS_NOTE.replace("review_count: 0", "review_count: 42"))
    os.utime(changed, ns=(OLD_NS + 1, OLD_NS + 1))
    (vault_dir / "主题" / "n0.md").unlink()
    write(vault_dir / "bad.md", "---\n[\n---\n")
    os.utime(vault_dir / "bad.md", ns=(OLD_NS, OLD_NS))
    third = Vault(vault_dir, cache).load()
    assert (third.parsed, third.reused) == (2, 3)
    assert third.by_path()["主题/n3.md"].review_count == 42 and "主题/n0.md" not in third.by_path()
    fourth = Vault(vault_dir, cache).load()
    assert (fourth.parsed, fourth.reused) == (0, 5)
    assert [p.path for p in fourth.problems] == ["bad.md"]


def test_recently_modified_files_are_not_trusted_to_the_cache(tmp_path):
    vault_dir = tmp_path / "vault"
    write(vault_dir / "fresh.md", USERS_NOTE)  # mtime = now: a same-tick edit could go unseen
    cache = tmp_path / "cache.sqlite3"
    Vault(vault_dir, cache).load()
    assert Vault(vault_dir, cache).load().parsed == 1


def test_a_broken_cache_file_is_rebuilt(tmp_path):
    vault_dir = make(tmp_path, 2)
    cache = tmp_path / "cache.sqlite3"
    cache.write_bytes(b"this is not sqlite" * 100)
    assert Vault(vault_dir, cache).load().parsed == 2
    assert Vault(vault_dir, cache).load().reused == 2


def test_metadata_json_cannot_hold_is_reparsed_not_mangled(tmp_path):
    vault_dir = tmp_path / "vault"
    path = write(vault_dir / "a.md", "---\n1: 数字键\nwhen: 2026-03-02 10:00:00+08:00\nreview_count: 2\n---\n# 标题\n")
    os.utime(path, ns=(OLD_NS, OLD_NS))
    cache = tmp_path / "cache.sqlite3"
    first = Vault(vault_dir, cache).load().notes[0]
    second_snap = Vault(vault_dir, cache).load()
    assert second_snap.notes[0].meta == first.meta and 1 in first.meta
    assert second_snap.parsed == 1


def _rows_in_table(cache) -> dict:
    import sqlite3

    from studyapp.vault.cache import COLUMNS

    with sqlite3.connect(cache) as db:
        return {row[0]: row for row in db.execute(f"SELECT {COLUMNS} FROM notes")}


def test_the_snapshot_is_never_older_than_the_rows_whoever_wrote_them(tmp_path):
    """Two processes' caches on one file, interleaved: a reader takes the rows from the
    snapshot only while it is the rows' current state."""
    from studyapp.vault.cache import MetadataCache

    vault_dir = make(tmp_path, 4)
    cache = tmp_path / "cache.sqlite3"
    Vault(vault_dir, cache).load()  # rows and snapshot
    first, second = (MetadataCache(cache, vault_dir.resolve()) for _ in range(2))
    assert first.read() == second.read() == _rows_in_table(cache)
    row, other = first.read()["主题/n1.md"], second.read()["主题/n2.md"]
    first.update([row[:1] + (row[1] + 1,) + row[2:]], [])  # the first changes a row...
    second.remember_pairings([("主题/n2.md", other[1], other[2], other[18], "[]")])  # ...the second, unaware, another
    second.update([], ["主题/n3.md"])
    third = MetadataCache(cache, vault_dir.resolve())
    assert third.read() == _rows_in_table(cache)
    assert third.read()["主题/n1.md"][1] == row[1] + 1 and "主题/n3.md" not in third.read()


def test_a_damaged_snapshot_is_read_from_the_rows(tmp_path):
    import sqlite3

    vault_dir = make(tmp_path, 3)
    cache = tmp_path / "cache.sqlite3"
    Vault(vault_dir, cache).load()
    with sqlite3.connect(cache) as db:
        assert db.execute("SELECT count(*) FROM snapshots WHERE snapshot IS NOT NULL").fetchone()[0] == 1
        db.execute("UPDATE snapshots SET snapshot = x'deadbeef'")
    again = Vault(vault_dir, cache).load()
    assert (again.parsed, again.reused) == (0, 3)
    with sqlite3.connect(cache) as db:  # and the snapshot is whole again
        blob = db.execute("SELECT snapshot FROM snapshots").fetchone()[0]
    assert blob != bytes.fromhex("deadbeef")


def test_a_note_from_the_cache_equals_the_note_parsed_field_for_field(tmp_path):
    """Fields a cached note decodes on first use (id, tags, drills, meta) equal the parsed ones."""
    import unicodedata

    vault_dir = tmp_path / "vault"
    decomposed = unicodedata.normalize("NFD", "主题/café.md")  # the id is the NFC form of the path
    text = USERS_NOTE.replace("tags:", "drills: [sdpa, mha]\ntags:")
    for name in (decomposed, "主题/plain.md"):
        os.utime(write(vault_dir / name, text), ns=(OLD_NS, OLD_NS))
    cache = tmp_path / "data" / "cache.sqlite3"
    parsed = Vault(vault_dir, cache).load()
    cached = Vault(vault_dir, cache).load()
    assert (parsed.parsed, cached.reused) == (2, 2)
    for fresh, kept in zip(parsed.notes, cached.notes, strict=True):
        assert kept == fresh
        assert (kept.id, kept.tags, kept.drills, kept.meta) == (fresh.id, fresh.tags, fresh.drills, fresh.meta)
        assert kept.drills == ["sdpa", "mha"] and kept.tags
    assert {n.id for n in cached.notes} == {unicodedata.normalize("NFC", decomposed), "主题/plain.md"}


def test_a_cold_due_writes_its_rows_and_the_pairings_it_worked_out_in_one_snapshot(tmp_path, monkeypatch, capsys):
    """A cold `due` parses every note, then pairs the due ones: both go to the cache in one
    write transaction with one snapshot (each snapshot of a 10,000-note vault is ~5 MB)."""
    from studyapp.cli import main
    from studyapp.vault.cache import MetadataCache

    vault_dir = make(tmp_path, 3)
    data = tmp_path / "data"
    snapshots = []
    save = MetadataCache._save_snapshot

    def counting(self, db, bump=True):
        snapshots.append(len(self._rows))
        save(self, db, bump)

    monkeypatch.setattr(MetadataCache, "_save_snapshot", counting)
    assert main(["due", "--json", "--vault", str(vault_dir), "--data-dir", str(data), "--now", "2026-06-15"]) == 0
    assert '"path": "主题/n0.md"' in capsys.readouterr().out
    assert [rows for rows in snapshots if rows] == [3]
    rows = MetadataCache(data / "cache.sqlite3", vault_dir.resolve()).read()
    assert sorted(rows) == ["主题/n0.md", "主题/n1.md", "主题/n2.md"]
    assert all(row[17] is not None for row in rows.values())  # every due note's pairing kept
    assert rows == _rows_in_table(data / "cache.sqlite3")


def test_held_writes_are_written_when_the_command_fails_after_the_load(tmp_path):
    """The rows parsed before an error are still worth keeping; nested holds write once."""
    import pytest

    vault_dir = make(tmp_path, 2)
    cache = tmp_path / "cache.sqlite3"
    vault = Vault(vault_dir, cache)
    with pytest.raises(RuntimeError), vault.cache_writes_held(), vault.cache_writes_held():
        vault.load()
        assert _rows_in_table(cache) == {}  # held: nothing written yet
        raise RuntimeError("the command failed after its load")
    assert sorted(_rows_in_table(cache)) == ["主题/n0.md", "主题/n1.md"]
    assert Vault(vault_dir, cache).load().reused == 2


def test_a_reload_while_writes_are_held_reads_the_rows_it_parsed(tmp_path):
    """The app holds its first load's rows until Today's pairings: a reload meanwhile (a note
    added outside the app) must not parse the whole vault again."""
    vault_dir = make(tmp_path, 3)
    cache = tmp_path / "cache.sqlite3"
    vault = Vault(vault_dir, cache)
    vault.hold_cache_writes()
    assert vault.load().parsed == 3
    again = vault.load()
    assert (again.parsed, again.reused) == (0, 3)
    vault.release_cache_writes()
    assert Vault(vault_dir, cache).load().reused == 3


def test_after_a_final_release_a_load_still_on_its_way_writes_at_once(tmp_path):
    """An app closing (final release) before its load thread asked to hold: nothing is held
    from then on, so nothing is left unwritten."""
    vault_dir = make(tmp_path, 2)
    cache = tmp_path / "cache.sqlite3"
    vault = Vault(vault_dir, cache)
    vault.release_cache_writes(final=True)
    vault.hold_cache_writes()
    vault.load()
    assert sorted(_rows_in_table(cache)) == ["主题/n0.md", "主题/n1.md"]
