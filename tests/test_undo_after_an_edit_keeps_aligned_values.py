"""Undo after the note was edited squeezes the spaces a user put between a review key's colon
and its value: a block written with its values lined up in one column (`review_count:    3`)
comes back as `review_count: 3`, `next_review: '2026-05-20'   # keep`, while the keys the
app does not own keep their column. Those spaces are not the value: a review leaves them as
they are (it replaces the value only), and the undo that puts back the user's own token
(`writeback.Written`) rebuilds the line as `key:` + one space + token, dropping them.
"""

from __future__ import annotations

from vault_fixtures import studyapp_process, write

ALIGNED = ("---\n"
           "created:       '2026-01-01'\n"
           "last_reviewed:   '2026-05-01'\n"
           "next_review:     '2026-05-20'   # keep\n"
           "review_count:    3\n"
           "mastery_level:   0.5\n"
           "difficulty:      hard\n"
           "---\n"
           "# Title\n\nbody\n")
EDIT = "\nA line added after the review.\n"


def test_undo_after_an_edit_keeps_the_spaces_before_each_value(tmp_path):
    note = write(tmp_path / "vault" / "n.md", ALIGNED)
    rated = studyapp_process(tmp_path, "rate", "n.md", "--rating", "good", now="2026-06-01T10:00:00")
    assert rated.returncode == 0, rated.stderr
    reviewed = note.read_text()
    assert "review_count:    4\n" in reviewed  # the review kept the column
    note.write_text(reviewed + EDIT)

    undone = studyapp_process(tmp_path, "undo", now="2026-06-01T10:05:00")

    assert undone.returncode == 0, undone.stderr
    assert note.read_text() == ALIGNED + EDIT
