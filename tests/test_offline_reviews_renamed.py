"""Defects found by using the app for a session while Obsidian and a sync tool changed the
vault. Each test fails on the code it was written against."""

from __future__ import annotations

import os
import shutil

from history_helpers import cli, make_vault


def _settled(*paths) -> None:
    for path in paths:
        st = os.stat(path)
        os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns - 60 * 10**9))


def _copy_new_logs(source, target) -> None:
    """A sync tool bringing the other device's log file (only files the target lacks)."""
    for f in (source / ".studyapp" / "log").glob("*.jsonl"):
        if not (target / ".studyapp" / "log" / f.name).exists():
            shutil.copy2(f, target / ".studyapp" / "log" / f.name)


def test_an_offline_review_of_a_note_renamed_here_reaches_its_file(tmp_path, capsys):
    """a.md was reviewed by the previous tool only (keys, no log history). A laptop reviews it
    offline; meanwhile it is renamed here (no move is logged: it has no history). When the
    laptop's log arrives, the incremental replay gives the review to the card (the note is no
    longer due) but writes no keys: 'updated the review keys of 0 notes', the file still says
    review_count 2 and overdue, and the next review here writes review_count 3 instead of 4.
    `sync --full` writes them, so the two replays disagree."""
    vault, here, laptop = make_vault(tmp_path / "vault"), tmp_path / "here", tmp_path / "laptop"
    cli(capsys, vault, here, "due", now="2026-11-12T09:00")
    offline = tmp_path / "offline"
    shutil.copytree(vault, offline)
    cli(capsys, offline, laptop, "rate", "a.md", "--rating", "good", now="2026-11-12T10:00")
    (vault / "a.md").rename(vault / "renamed.md")
    _settled(vault / "renamed.md")
    cli(capsys, vault, here, "due", now="2026-11-12T11:00")
    _copy_new_logs(offline, vault)
    cli(capsys, vault, here, "sync", now="2026-11-12T12:00")
    text = (vault / "renamed.md").read_text()
    assert "review_count: 3" in text and "last_reviewed: 2026-11-12" in text, text


def _note(title: str) -> str:
    return ("---\ncreated: '2026-10-01'\nlast_reviewed: '2026-11-06'\nnext_review: '2026-11-13'\n"
            f"review_count: 4\ndifficulty: medium\nmastery_level: 0.5\ntags: []\n---\n# {title}\n\n"
            f"## answer\n\ntext of {title}\n")


def test_an_offline_review_before_a_swap_of_two_notes_without_history_stays_with_its_note(
        tmp_path, capsys):
    """Two notes the previous tool reviewed (keys only, no log history, as in a migrated vault).
    A laptop reviews "Note a" offline; here a.md and b.md are swapped (no move is logged: they
    have no history). When the laptop's log arrives, the replay writes Note a's review into
    Note b (now at a.md): last_reviewed, next_review, review_count 5 in the wrong note, while
    Note a (now at b.md) keeps its old keys. `sync --full` and a fresh device agree with it."""
    vault, here, laptop = tmp_path / "vault", tmp_path / "here", tmp_path / "laptop"
    vault.mkdir()
    for name in ("a", "b", "c"):
        (vault / f"{name}.md").write_text(_note(f"Note {name}"))
    cli(capsys, vault, here, "due", now="2026-11-20T10:00")
    offline = tmp_path / "offline"
    shutil.copytree(vault, offline)
    cli(capsys, offline, laptop, "rate", "a.md", "--rating", "easy", now="2026-11-22T10:00")
    (vault / "a.md").rename(vault / "tmp.md")
    (vault / "b.md").rename(vault / "a.md")
    (vault / "tmp.md").rename(vault / "b.md")
    _settled(vault / "a.md", vault / "b.md")
    cli(capsys, vault, here, "due", now="2026-11-22T11:00")
    _copy_new_logs(offline, vault)
    cli(capsys, vault, here, "sync", now="2026-11-22T12:00")
    assert (vault / "a.md").read_text() == _note("Note b"), "Note b got Note a's review"
    assert "review_count: 5" in (vault / "b.md").read_text(), "Note a lost its review"
