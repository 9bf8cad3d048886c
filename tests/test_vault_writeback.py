"""Write-back changes only the owned values, byte for byte, in every shape of note."""

from __future__ import annotations

import os
import stat
from datetime import date

import pytest
from vault_fixtures import USERS_NOTE, write

from studyapp.errors import UserError
from studyapp.vault import Vault, content_hash

REVIEW = {
    "last_reviewed": date(2026, 11, 22),
    "next_review": date(2026, 11, 25),
    "review_count": 1,
    "mastery_level": 0.42,
}


def expected_after_review(text: str) -> str:
    """The fixture as the review should leave it, written out by hand line by line."""
    return (text.replace("last_reviewed: null", "last_reviewed: '2026-11-22'")
                .replace("next_review: '2026-03-02'", "next_review: '2026-11-25'")
                .replace("review_count: 0", "review_count: 1")
                .replace("mastery_level: 0.0", "mastery_level: 0.42"))


def review(tmp_path, raw: bytes, updates=REVIEW) -> bytes:
    path = write(tmp_path / "归一化" / "note.md", raw)
    vault = Vault(tmp_path)
    note = vault.read_note("归一化/note.md")
    vault.write_review_keys(note, updates)
    return path.read_bytes()


@pytest.mark.parametrize("newline", ["\n", "\r\n"])
@pytest.mark.parametrize("bom", [b"", b"\xef\xbb\xbf"])
@pytest.mark.parametrize("final_newline", [True, False])
def test_only_owned_values_change(tmp_path, newline, bom, final_newline):
    text = USERS_NOTE if final_newline else USERS_NOTE.rstrip("\n")
    raw = bom + text.replace("\n", newline).encode()
    after = review(tmp_path, raw)
    assert after == bom + expected_after_review(text).replace("\n", newline).encode()


def test_extra_keys_and_comments_survive_in_place(tmp_path):
    text = USERS_NOTE.replace(
        "difficulty: medium\n",
        "difficulty: medium   # 我自己的判断\naliases: [LN, BN]\nsource: \"课程笔记\"\n# 一行注释\n",
    ).replace("review_count: 0\n", "review_count: 0  # 复习次数\n")
    after = review(tmp_path, text.encode()).decode()
    assert after == expected_after_review(text)
    assert "review_count: 1  # 复习次数\n" in after


def test_double_quoted_and_unquoted_dates_keep_their_style(tmp_path):
    text = USERS_NOTE.replace("created: '2026-03-02'", 'created: "2026-03-02"').replace(
        "next_review: '2026-03-02'", "next_review: 2026-03-02")
    after = review(tmp_path, text.encode()).decode()
    assert "next_review: 2026-11-25\n" in after
    # null takes the style of the note's other dates (here: double quotes, from `created`)
    assert 'last_reviewed: "2026-11-22"\n' in after


def test_missing_keys_are_appended_at_the_end_of_the_block(tmp_path):
    text = "---\ndifficulty: hard\ntags: [注意力]\n---\n# 多头注意力\n"
    after = review(tmp_path, text.encode()).decode()
    assert after == ("---\ndifficulty: hard\ntags: [注意力]\n"
                     "last_reviewed: '2026-11-22'\nnext_review: '2026-11-25'\n"
                     "review_count: 1\nmastery_level: 0.42\n---\n# 多头注意力\n")


def test_value_to_null_and_unchanged_values_leave_lines_alone(tmp_path):
    text = USERS_NOTE.replace("last_reviewed: null", "last_reviewed: '2026-03-05'")
    after = review(tmp_path, text.encode(), {"last_reviewed": None, "review_count": 0})
    assert after.decode() == text.replace("last_reviewed: '2026-03-05'", "last_reviewed: null")


def test_write_returns_the_reread_note_and_keeps_permissions(tmp_path):
    path = write(tmp_path / "a.md", USERS_NOTE)
    os.chmod(path, 0o640)
    vault = Vault(tmp_path)
    note = vault.write_review_keys(vault.read_note("a.md"), REVIEW)
    assert (note.next_review, note.review_count, note.mastery_level) == (date(2026, 11, 25), 1, 0.42)
    assert note.content_hash == content_hash(path.read_bytes())
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o640


def test_symlinked_note_is_written_through_the_link(tmp_path):
    target = write(tmp_path / "elsewhere" / "real.md", USERS_NOTE)
    vault_dir = tmp_path / "vault"
    vault_dir.mkdir()
    (vault_dir / "link.md").symlink_to(target)
    vault = Vault(vault_dir)
    vault.write_review_keys(vault.read_note("link.md"), REVIEW)
    assert (vault_dir / "link.md").is_symlink()
    assert target.read_text() == expected_after_review(USERS_NOTE)


@pytest.mark.parametrize("block, why", [
    ("next_review: '2026-03-02'\nnext_review: '2026-03-09'\n", "more than once"),
    ("next_review: >\n  2026-03-02\n", "not a single plain scalar"),
    ("next_review:\n  - 2026-03-02\n", "not a date"),  # refused when read
])
def test_values_that_cannot_be_edited_in_place_are_refused(tmp_path, block, why):
    raw = f"---\n{block}---\n# 标题\n".encode()
    path = write(tmp_path / "a.md", raw)
    vault = Vault(tmp_path)
    with pytest.raises(UserError, match=why):
        vault.write_review_keys(vault.read_note("a.md"), {"next_review": date(2026, 4, 1)})
    assert path.read_bytes() == raw


def test_bad_update_values_are_a_programming_error(tmp_path):
    write(tmp_path / "a.md", USERS_NOTE)
    vault = Vault(tmp_path)
    note = vault.read_note("a.md")
    with pytest.raises(ValueError, match="difficulty"):
        vault.write_review_keys(note, {"difficulty": "hard"})
    for bad in ("three", -1, 2.5, True):
        with pytest.raises(TypeError):
            vault.write_review_keys(note, {"review_count": bad})


def test_note_without_block_gets_the_standard_block(tmp_path):
    body = "RoPE 简介\r\n正文第一行\r\n"
    path = write(tmp_path / "位置编码" / "rope.md", body)
    vault = Vault(tmp_path)
    vault.write_review_keys(vault.read_note("位置编码/rope.md"),
                            {"created": date(2026, 11, 22), **REVIEW})
    text = path.read_bytes().decode()
    assert text.endswith("---\r\n" + body)
    assert text.startswith("---\r\ncreated: '2026-11-22'\r\nlast_reviewed: '2026-11-22'\r\n"
                           "next_review: '2026-11-25'\r\nreview_count: 1\r\n")
    assert "tags:\r\n- 位置编码\r\n- 位置编码/rope.md\r\n" in text
