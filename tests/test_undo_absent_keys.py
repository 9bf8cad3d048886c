"""Undo puts a note's review keys back as they were, and "as they were" includes "not there".

A note written by hand often lacks some of the keys a review writes (`last_reviewed`,
`next_review`, `review_count`, `mastery_level`): the review appends them. An undo after the
note was edited cannot restore its old bytes, so it writes the old values, and for a key the
note never had it wrote `key: null`: four lines the user never wrote, left behind by an undo.
The same happened on another device replaying the log, when every review of the note was undone.
"""

from __future__ import annotations

import os
import time

from history_helpers import cli

HAND_WRITTEN = """---
created: 2026-11-01
difficulty: medium
tags: [attention]
---
# Why scale by sqrt(d_k)

Dot products grow with the dimension.
"""

WITH_NULL = """---
created: 2026-11-01
last_reviewed: null
tags: [attention]
---
# Causal mask

Upper triangle set to -inf.
"""

EDIT = "A line added after the review.\n"


def _vault(tmp_path, text=HAND_WRITTEN):
    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / "n.md").write_text(text)
    return vault


def test_undo_after_an_edit_takes_out_the_keys_the_review_added(tmp_path, capsys):
    vault, data = _vault(tmp_path), tmp_path / "data"
    cli(capsys, vault, data, "rate", "n.md", "--rating", "good", now="2026-11-20T08:00")
    reviewed = (vault / "n.md").read_text()
    assert "last_reviewed:" in reviewed and "review_count: 1" in reviewed
    (vault / "n.md").write_text(reviewed + EDIT)

    cli(capsys, vault, data, "undo", now="2026-11-20T08:05")

    assert (vault / "n.md").read_text() == HAND_WRITTEN + EDIT


def test_undo_after_an_edit_keeps_a_key_that_was_there_empty(tmp_path, capsys):
    vault, data = _vault(tmp_path, WITH_NULL), tmp_path / "data"
    cli(capsys, vault, data, "rate", "n.md", "--rating", "good", now="2026-11-20T08:00")
    (vault / "n.md").write_text((vault / "n.md").read_text() + EDIT)

    cli(capsys, vault, data, "undo", now="2026-11-20T08:05")

    assert (vault / "n.md").read_text() == WITH_NULL + EDIT


def test_a_device_replaying_an_undone_review_takes_out_the_keys_it_added(tmp_path, capsys):
    vault, laptop, phone = _vault(tmp_path), tmp_path / "laptop", tmp_path / "phone"
    cli(capsys, vault, phone, "due", now="2026-11-20T07:00")
    cli(capsys, vault, laptop, "rate", "n.md", "--rating", "good", now="2026-11-20T08:00")
    reviewed = (vault / "n.md").read_bytes()
    cli(capsys, vault, laptop, "undo", now="2026-11-20T08:05")
    assert (vault / "n.md").read_text() == HAND_WRITTEN
    # the file sync brings back the reviewed copy (a conflict copy won), then the phone syncs;
    # an old mtime: a copy written a moment ago may be a review whose log line is still coming
    (vault / "n.md").write_bytes(reviewed)
    old = time.time() - 600
    os.utime(vault / "n.md", (old, old))

    cli(capsys, vault, phone, "due", now="2026-11-20T09:00")

    assert (vault / "n.md").read_text() == HAND_WRITTEN


def test_a_comment_added_to_a_key_the_review_added_is_kept(tmp_path, capsys):
    vault, data = _vault(tmp_path), tmp_path / "data"
    cli(capsys, vault, data, "rate", "n.md", "--rating", "good", now="2026-11-20T08:00")
    text = (vault / "n.md").read_text()
    line = next(x for x in text.splitlines() if x.startswith("review_count:"))
    (vault / "n.md").write_text(text.replace(line, line + "  # my own count") + EDIT)

    cli(capsys, vault, data, "undo", now="2026-11-20T08:05")

    after = (vault / "n.md").read_text()
    assert "review_count: 0  # my own count\n" in after, after
    assert "last_reviewed" not in after and "next_review" not in after, after
    assert after.endswith(EDIT)


def test_a_review_recorded_by_an_older_version_still_undoes_to_null(tmp_path, capsys):
    """Rows written before absence was recorded name every key, a missing one as null: an
    undo of such a row writes null, as those versions did (it cannot know better)."""
    import json
    import sqlite3

    vault, data = _vault(tmp_path), tmp_path / "data"
    cli(capsys, vault, data, "rate", "n.md", "--rating", "good", now="2026-11-20T08:00")
    old_style = json.dumps({"last_reviewed": None, "next_review": None, "review_count": None,
                            "mastery_level": None})
    db = data / "studyapp.sqlite3"
    with sqlite3.connect(db) as conn:
        assert conn.execute("UPDATE reviews SET file_values_before = ?", (old_style,)).rowcount == 1
    (vault / "n.md").write_text((vault / "n.md").read_text() + EDIT)

    cli(capsys, vault, data, "undo", now="2026-11-20T08:05")

    after = (vault / "n.md").read_text()
    assert "last_reviewed: null\n" in after and "mastery_level: null\n" in after, after


def test_the_log_says_which_keys_the_note_lacked_and_older_readers_see_nulls(tmp_path, capsys):
    import json

    vault, data = _vault(tmp_path, WITH_NULL), tmp_path / "data"
    cli(capsys, vault, data, "rate", "n.md", "--rating", "good", now="2026-11-20T08:00")
    (log,) = (vault / ".studyapp" / "log").glob("*")
    (event,) = [json.loads(line) for line in log.read_text().splitlines() if '"review"' in line]
    data_ = event.get("data", event)
    assert data_["values_before"] == {"last_reviewed": None, "next_review": None,
                                      "review_count": None, "mastery_level": None}
    assert data_["absent_before"] == ["next_review", "review_count", "mastery_level"]


def test_the_review_keys_the_log_reader_knows_are_the_notes_review_keys():
    from studyapp.history.events import _EVERY_REVIEW_KEY
    from studyapp.vault.model import REVIEW_KEYS

    assert _EVERY_REVIEW_KEY == set(REVIEW_KEYS)
