"""Concurrent edits and malformed notes: never lose someone's edit, never touch a broken file."""

from __future__ import annotations

from datetime import date

import pytest
from vault_fixtures import USERS_NOTE, write

from studyapp.vault import NoteWriteError, Vault, WriteConflict, content_hash

REVIEW = {"last_reviewed": date(2026, 11, 22), "next_review": date(2026, 11, 25), "review_count": 1}


def test_edit_elsewhere_in_the_note_is_kept_and_review_applied(tmp_path):
    path = write(tmp_path / "a.md", USERS_NOTE)
    vault = Vault(tmp_path)
    note = vault.read_note("a.md")
    edited = USERS_NOTE.replace("批归一化在批维度上", "（作者刚改过）批归一化在批维度上").replace(
        "difficulty: medium", "difficulty: hard\nsource: 我的书")
    path.write_text(edited)
    new = vault.write_review_keys(note, REVIEW)
    text = path.read_text()
    assert "（作者刚改过）" in text and "source: 我的书\n" in text and "difficulty: hard\n" in text
    assert "next_review: '2026-11-25'\n" in text and new.review_count == 1


def test_edit_of_the_same_key_is_a_conflict(tmp_path):
    path = write(tmp_path / "a.md", USERS_NOTE)
    vault = Vault(tmp_path)
    note = vault.read_note("a.md")
    edited = USERS_NOTE.replace("next_review: '2026-03-02'", "next_review: '2026-12-31'")
    path.write_text(edited)
    with pytest.raises(WriteConflict, match="next_review"):
        vault.write_review_keys(note, REVIEW)
    assert path.read_text() == edited


def test_note_broken_or_deleted_meanwhile_is_a_conflict(tmp_path):
    path = write(tmp_path / "a.md", USERS_NOTE)
    vault = Vault(tmp_path)
    note = vault.read_note("a.md")
    path.write_bytes(b"---\nnext_review: [\n---\n")
    with pytest.raises(WriteConflict):
        vault.write_review_keys(note, REVIEW)
    assert path.read_bytes() == b"---\nnext_review: [\n---\n"
    path.unlink()
    with pytest.raises(WriteConflict, match="deleted"):
        vault.write_review_keys(note, REVIEW)
    assert not path.exists()


@pytest.mark.parametrize("raw", [
    b"---\ntags: [a\n---\n# x\n",
    b"---\n- a list\n---\n",
    b"---\nnext_review: '2026-01-01'\n",
    b"\xff\xfe---\n",
])
def test_malformed_notes_are_never_written(tmp_path, raw):
    path = write(tmp_path / "bad.md", raw)
    good = write(tmp_path / "good.md", USERS_NOTE)
    vault = Vault(tmp_path)
    note = vault.read_note("good.md")
    # Point a valid Note at the broken file, as a stale UI list might.
    stale = type(note)(note.id, "bad.md", note.title, note.meta, True, content_hash(raw), len(raw), 0, str(path))
    with pytest.raises(NoteWriteError):
        vault.write_review_keys(stale, REVIEW)
    assert path.read_bytes() == raw
    assert good.read_text() == USERS_NOTE


def test_restore_bytes_only_over_what_we_wrote(tmp_path):
    path = write(tmp_path / "a.md", USERS_NOTE)
    vault = Vault(tmp_path)
    old = path.read_bytes()
    new = vault.write_review_keys(vault.read_note("a.md"), REVIEW)
    vault.restore_bytes("a.md", old, new.content_hash)
    assert path.read_bytes() == old
    with pytest.raises(WriteConflict, match="edited since"):
        vault.restore_bytes("a.md", b"other", new.content_hash)
    assert path.read_bytes() == old
