"""Undo (after an edit) of notes the new undo code still does not put back as written."""

from __future__ import annotations

from history_helpers import cli

EDIT = "A line added after the review.\n"

PLAIN_TEXT_NUMBER = """---
created: 2026-11-01
review_count: 2
last_reviewed: 2026-11-01
next_review: 2026-11-10
mastery_level: 1e-3
tags: [x]
---
# T

Body.
"""

NO_BLOCK = "# T\n\nBody.\n"


def test_undo_after_an_edit_puts_back_mastery_as_the_user_wrote_it(tmp_path, capsys):
    """`mastery_level: 1e-3` is rateable since d773951; an undo after an edit writes `0.001`."""
    vault, data = tmp_path / "vault", tmp_path / "data"
    vault.mkdir()
    note = vault / "n.md"
    note.write_text(PLAIN_TEXT_NUMBER)
    cli(capsys, vault, data, "rate", "n.md", "--rating", "good", now="2026-11-20T08:00")
    note.write_text(note.read_text() + EDIT)

    cli(capsys, vault, data, "undo", now="2026-11-20T08:05")

    assert note.read_text() == PLAIN_TEXT_NUMBER + EDIT


def test_undo_of_a_blockless_note_moved_to_another_folder_leaves_no_stub(tmp_path, capsys):
    """A block-less note in a folder, reviewed, then moved (and edited) before undo: the
    default block's tags name the old folder, so `without_default_block` (built from the new
    path) no longer recognises it, and the stub block (created/difficulty/tags/related_outlines,
    no review keys) the fix set out to avoid is left."""
    vault, data = tmp_path / "vault", tmp_path / "data"
    (vault / "a").mkdir(parents=True)
    (vault / "b").mkdir()
    old, new = vault / "a" / "n.md", vault / "b" / "n.md"
    old.write_text(NO_BLOCK)
    cli(capsys, vault, data, "rate", "a/n.md", "--rating", "good", now="2026-11-20T08:00")
    new.write_text(old.read_text() + EDIT)
    old.unlink()

    cli(capsys, vault, data, "undo", now="2026-11-20T08:05")

    assert new.read_text() == NO_BLOCK + EDIT
