"""Loading real-world files: encodings, line endings, symlinks, hidden folders, odd sizes."""

from __future__ import annotations

import os
from datetime import date

import pytest
from vault_fixtures import PLAIN_NOTE, USERS_NOTE, write

from studyapp.vault import Vault


def load(tmp_path):
    return Vault(tmp_path).load()


def test_users_note_fields(tmp_path):
    write(tmp_path / "归一化" / "ln.md", USERS_NOTE)
    (note,) = load(tmp_path).notes
    assert note.id == note.path == "归一化/ln.md"
    assert note.title == "层归一化与批归一化的区别"
    assert note.answer.startswith("批归一化在批维度上") and note.answer.endswith("不依赖批大小。")
    assert note.body.startswith("# 层归一化")
    assert (note.created, note.next_review, note.last_reviewed) == (date(2026, 3, 2), date(2026, 3, 2), None)
    assert (note.review_count, note.difficulty, note.mastery_level) == (0, "medium", 0.0)
    assert note.tags == ["归一化", "归一化/层归一化与批归一化的区别.md"]
    assert note.has_block and note.meta["related_outlines"] == []


@pytest.mark.parametrize("newline", ["\n", "\r\n"])
@pytest.mark.parametrize("bom", [b"", b"\xef\xbb\xbf"])
def test_bom_and_crlf(tmp_path, newline, bom):
    write(tmp_path / "a.md", bom + USERS_NOTE.replace("\n", newline).encode())
    (note,) = load(tmp_path).notes
    assert note.title == "层归一化与批归一化的区别"
    assert note.next_review == date(2026, 3, 2)
    assert "\r" not in note.answer.replace("\r\n", "")


def test_dates_quoted_unquoted_null_and_trailing_whitespace(tmp_path):
    write(tmp_path / "a.md", "---  \ncreated: 2026-03-02   \nnext_review: \"2026-03-09\"\n"
                             "last_reviewed: ~\nmastery_level: null\n---   \n# 标题  \n")
    (note,) = load(tmp_path).notes
    assert (note.created, note.next_review, note.last_reviewed) == (date(2026, 3, 2), date(2026, 3, 9), None)
    assert note.mastery_level is None and note.title == "标题"


def test_plain_note_title_is_its_first_line_not_a_code_comment(tmp_path):
    write(tmp_path / "rope.md", PLAIN_NOTE)
    write(tmp_path / "long.md", "很长" * 100 + "\n正文\n")
    notes = load(tmp_path).by_path()
    assert notes["rope.md"].title == "旋转位置编码 RoPE 简介"
    assert not notes["rope.md"].has_block and notes["rope.md"].is_new
    assert notes["long.md"].title == "long"


def test_code_comments_are_not_headings(tmp_path):
    write(tmp_path / "a.md", "---\nreview_count: 2\n---\n" + "x" * 200 + "\n```\n# 注释\n```\n# 真标题\n## 答案\n要点\n")
    (note,) = load(tmp_path).notes
    assert note.title == "真标题" and note.answer == "要点"


def test_empty_and_huge_notes(tmp_path):
    write(tmp_path / "empty.md", b"")
    write(tmp_path / "huge.md", USERS_NOTE + ("长文本" * 1000 + "\n") * 2000)
    notes = load(tmp_path).by_path()
    assert notes["empty.md"].title == "empty" and notes["empty.md"].body == ""
    assert notes["huge.md"].size > 10_000_000 and notes["huge.md"].review_count == 0


def test_hidden_folders_and_non_notes_are_skipped(tmp_path):
    write(tmp_path / ".obsidian" / "x.md", USERS_NOTE)
    write(tmp_path / ".git" / "y.md", USERS_NOTE)
    write(tmp_path / "sub" / ".hidden" / "z.md", USERS_NOTE)
    write(tmp_path / "sub" / ".a.md.1234.studyapp-tmp", USERS_NOTE)
    write(tmp_path / "sub" / "image.png", b"\x89PNG")
    write(tmp_path / "sub" / "keep.md", USERS_NOTE)
    snap = load(tmp_path)
    assert [n.path for n in snap.notes] == ["sub/keep.md"] and snap.problems == []


def test_symlinks_followed_and_loops_cut(tmp_path):
    vault = tmp_path / "vault"
    write(tmp_path / "outside" / "shared.md", USERS_NOTE)
    write(vault / "topic" / "own.md", USERS_NOTE)
    (vault / "linked.md").symlink_to(tmp_path / "outside" / "shared.md")
    (vault / "topic" / "loop").symlink_to(vault)  # directory loop
    (vault / "broken.md").symlink_to(tmp_path / "nowhere.md")
    snap = Vault(vault).load()
    paths = [n.path for n in snap.notes]
    assert "linked.md" in paths and "topic/own.md" in paths
    assert len(paths) <= 4  # the loop is followed at most once, never forever
    assert [(p.path, p.reason) for p in snap.problems] == [
        ("broken.md", "broken symbolic link"),
        ("topic/loop", "the same folder as the vault itself (through a symbolic link): its notes are studied there")]


@pytest.mark.parametrize("raw, reason", [
    (b"---\ntags: [a, b\n---\n# x\n", "not valid YAML at line"),
    (b"---\n- just\n- a list\n---\n# x\n", "must be a mapping"),
    (b"---\ncreated: '2026-03-02'\n# never closed\n", "never closed"),
    (b"---\nnext_review: 2026-13-45\n---\n", "not valid YAML"),
    (b"# \xff\xfe title\n", "not valid UTF-8"),
])
def test_malformed_notes_are_problems_with_a_reason(tmp_path, raw, reason):
    write(tmp_path / "bad.md", raw)
    snap = load(tmp_path)
    assert snap.notes == []
    (problem,) = snap.problems
    assert problem.path == "bad.md" and reason in problem.reason and "\n" not in problem.reason


def test_read_note_errors_are_user_errors(tmp_path):
    from studyapp.errors import UserError

    write(tmp_path / "bad.md", b"---\n[\n---\n")
    vault = Vault(tmp_path)
    with pytest.raises(UserError, match="bad.md"):
        vault.read_note("bad.md")
    with pytest.raises(UserError, match="no such note"):
        vault.read_note("missing.md")
    with pytest.raises(UserError, match="inside the vault"):
        vault.read_note("../escape.md")


def test_missing_vault_folder_is_a_user_error(tmp_path):
    from studyapp.errors import UserError

    with pytest.raises(UserError, match="does not exist"):
        Vault(tmp_path / "nope").load()
    assert os.path.exists(tmp_path)


def test_stale_temp_files_of_killed_writers_are_swept_fresh_ones_kept(tmp_path):
    import os
    import time

    from studyapp.atomic import TEMP_SUFFIX
    from studyapp.vault import Vault

    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / "note.md").write_text("# 标题\n", encoding="utf-8")
    stale = vault / f".note.md.dead{TEMP_SUFFIX}"
    fresh = vault / f".note.md.live{TEMP_SUFFIX}"
    other = vault / ".my-hidden-file"
    for f in (stale, fresh, other):
        f.write_text("partial", encoding="utf-8")
    old = time.time() - 2 * 3600
    os.utime(stale, (old, old))
    os.utime(other, (old, old))
    snapshot = Vault(vault).load()
    assert [n.path for n in snapshot.notes] == ["note.md"]
    assert not stale.exists(), "an abandoned temp file is removed"
    assert fresh.exists(), "a temp file a live writer may still own is left alone"
    assert other.exists(), "hidden files that are not ours are never touched"
