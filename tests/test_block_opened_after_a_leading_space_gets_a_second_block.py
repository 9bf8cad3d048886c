"""A note whose opening `---` has something unseen in front of it on the first line (a second
BOM, as a tool that adds a BOM to a file that already has one writes; a space; a no-break
space) is studied as a new note with no block: `due` lists it as new, titled `---`, with its
`next_review`, `last_reviewed` and `review_count` unread, and the first `rate` puts a second
block in front, leaving the user's schedule below as text. The README refuses exactly this
harm for a block below blank lines or opened by `---` and an unseen character ("Obsidian reads
it as text, and a review would add a second block in front"); `parse.find_layout` looks for a
late block only when the first line is blank or starts with `---`, so a `---` preceded by a
blank character is never checked.
"""

from __future__ import annotations

import json

import pytest
from vault_fixtures import studyapp_process, write

NOTE = ("{before}---\nnext_review: 2026-09-01\nlast_reviewed: 2026-05-01\nreview_count: 5\n---\n"
        "# Real Title\n\nbody\n")
BEFORE = {"second BOM": "\ufeff\ufeff", "space": " ", "no-break space": "\u00a0"}


@pytest.mark.parametrize("before", BEFORE.values(), ids=BEFORE.keys())
def test_a_block_opened_after_a_blank_character_is_refused_not_given_a_second_block(tmp_path, before):
    raw = NOTE.format(before=before).encode("utf-8")
    note = write(tmp_path / "vault" / "n.md", raw)

    due = studyapp_process(tmp_path, "due", "--json", now="2026-06-01T10:00:00")
    rated = studyapp_process(tmp_path, "rate", "n.md", "--rating", "good", now="2026-06-01T10:00:00")

    assert note.read_bytes() == raw, "the review put a second block in front"
    assert rated.returncode != 0
    assert [n["path"] for n in json.loads(due.stdout)] == []  # reported, not studied as new
    assert "n.md" in due.stderr
