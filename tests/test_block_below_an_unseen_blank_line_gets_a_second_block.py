"""A note whose metadata block sits below a first line that looks empty but holds a no-break
space, a form feed, an ideographic space or a zero-width space is studied as a new note with
no block: `due` lists it as new, titled `---`, its `next_review`, `last_reviewed` and
`review_count` unread, and the first `rate` puts a second block in front of the note, leaving
the user's schedule behind as text. The same note below a truly blank line (or a line of
spaces or tabs) is refused with "the metadata block does not start on the first line", as the
README promises for a block of review keys below blank lines: `parse._LATE_BLOCK` and
`parse._LATE_START` take only spaces and tabs for blanks, where `parse._UNSEEN` (already used
for the opening `---`) names the characters that show as nothing.
"""

from __future__ import annotations

import json

import pytest
from vault_fixtures import studyapp_process, write

NOTE = ("{blank}\n---\nnext_review: 2026-09-01\nlast_reviewed: 2026-05-01\nreview_count: 5\n---\n"
        "# Real Title\n\nbody\n")
BLANKS = {"no-break space": "\u00a0", "form feed": "\x0c", "ideographic space": "\u3000",
          "zero-width space": "\u200b"}


@pytest.mark.parametrize("blank", BLANKS.values(), ids=BLANKS.keys())
def test_a_block_below_an_unseen_blank_line_is_refused_not_given_a_second_block(tmp_path, blank):
    text = NOTE.format(blank=blank)
    note = write(tmp_path / "vault" / "n.md", text)

    due = studyapp_process(tmp_path, "due", "--json", now="2026-06-01T10:00:00")
    rated = studyapp_process(tmp_path, "rate", "n.md", "--rating", "good", now="2026-06-01T10:00:00")

    assert note.read_text(encoding="utf-8") == text, "the review put a second block in front"
    assert rated.returncode != 0
    assert [n["path"] for n in json.loads(due.stdout)] == []  # reported, not studied as new
    assert "n.md" in due.stderr
