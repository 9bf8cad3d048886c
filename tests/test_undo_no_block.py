"""A note with no metadata block at all: its first review puts the standard block in front
(`vault.blocks.add_default_block`: created, last_reviewed, next_review, review_count,
difficulty, mastery_level, tags, related_outlines). An exact undo takes the block out again
(the old bytes come back). An undo after the user edited the note, or another device replaying
the undone review onto the reviewed copy, takes out only the four review keys (`ABSENT`) and
leaves a stub block the user never wrote and no import writes either:

    ---
    created: '2026-11-20'
    difficulty: medium
    tags: []
    related_outlines: []
    ---

The note is then neither as it was (no block) nor as `import` would have made it (the full
default block). Same with the TUI's `u`.
"""

from __future__ import annotations

import os
import time

from history_helpers import cli

from studyapp.vault.model import REVIEW_KEYS

NO_BLOCK = "# Why scale by sqrt(d_k)\n\nDot products grow with the dimension.\n"
EDIT = "A line added after the review.\n"


def _as_it_was_or_imported(text: str, expected_without_block: str) -> bool:
    """No block again (as it was), or at least a whole default block (as import writes it),
    never a block that holds `created` but none of the review keys."""
    if text == expected_without_block:
        return True
    return text.startswith("---\n") and all(f"\n{key}:" in text for key in REVIEW_KEYS)


def test_undo_after_an_edit_of_a_note_that_had_no_block_leaves_no_stub_block(tmp_path, capsys):
    vault, data = tmp_path / "vault", tmp_path / "data"
    vault.mkdir()
    note = vault / "n.md"
    note.write_text(NO_BLOCK)
    cli(capsys, vault, data, "rate", "n.md", "--rating", "good", now="2026-11-20T08:00")
    assert note.read_text().startswith("---\ncreated:")  # the review added the standard block
    note.write_text(note.read_text() + EDIT)

    cli(capsys, vault, data, "undo", now="2026-11-20T08:05")

    after = note.read_text()
    assert _as_it_was_or_imported(after, NO_BLOCK + EDIT), after


def test_a_device_replaying_the_undone_review_of_a_blockless_note_leaves_no_stub_block(tmp_path, capsys):
    vault, laptop, phone = tmp_path / "vault", tmp_path / "laptop", tmp_path / "phone"
    vault.mkdir()
    note = vault / "n.md"
    note.write_text(NO_BLOCK)
    cli(capsys, vault, phone, "due", now="2026-11-20T07:00")
    cli(capsys, vault, laptop, "rate", "n.md", "--rating", "good", now="2026-11-20T08:00")
    reviewed = note.read_bytes()
    cli(capsys, vault, laptop, "undo", now="2026-11-20T08:05")
    assert note.read_text() == NO_BLOCK  # exact undo: no block
    note.write_bytes(reviewed)  # a file-sync conflict brings the reviewed copy back
    old = time.time() - 600
    os.utime(note, (old, old))

    cli(capsys, vault, phone, "due", now="2026-11-20T09:00")

    after = note.read_text()
    assert _as_it_was_or_imported(after, NO_BLOCK), after
