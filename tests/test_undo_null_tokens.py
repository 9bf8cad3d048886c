"""Undo after an edit rewrites the empty value a user wrote (`last_reviewed:`, `~`) as
`null`, and an empty or `~` `review_count` as `0`: key lines the user never wrote. The exact
old bytes of the note are kept in the database (`Store.undo_bytes`, `bytes_kept`), so the app
could put the user's own token back; an exact undo (no edit) does.
"""

from __future__ import annotations

import pytest
from history_helpers import cli

EDIT = "A line added after the review.\n"

SHAPES = {
    "empty values": "---\ncreated: 2026-11-01\nlast_reviewed:\nreview_count:\n---\n# T\n\nbody\n",
    "tilde values": ("---\ncreated: 2026-11-01\nlast_reviewed: ~\nreview_count: ~\n"
                     "mastery_level: ~\n---\n# T\n\nbody\n"),
}


@pytest.mark.parametrize("original", SHAPES.values(), ids=SHAPES.keys())
def test_undo_after_an_edit_keeps_the_null_token_the_user_wrote(tmp_path, capsys, original):
    vault, data = tmp_path / "vault", tmp_path / "data"
    vault.mkdir()
    note = vault / "n.md"
    note.write_text(original)
    cli(capsys, vault, data, "rate", "n.md", "--rating", "good", now="2026-11-20T08:00")
    note.write_text(note.read_text() + EDIT)

    cli(capsys, vault, data, "undo", now="2026-11-20T08:05")

    assert note.read_text() == original + EDIT
