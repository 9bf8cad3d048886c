"""Once every review of a note is undone, a replay (`sync`, `due` after the log changed) must
find the note agreeing with the log and leave it. For these shapes it never does: every replay,
on every device, "updates the review keys" of the note again (`sync --full` lists it each time),
and one of them changes the user's `review_count: null` into `review_count: 0`.

- the user commented on a review key the review had added (`review_count: 1  # mine`): the
  undo keeps that line (as designed, `review_count: 0  # mine`), but the replay wants the key
  ABSENT, finds it there, and writes it again, forever;
- the note had `review_count: null` (or empty): the replay wants None, the note reads 0;
- the note had a quoted count (`review_count: '3'`): the replay wants the string '3', the note
  reads the number 3.
"""

from __future__ import annotations

import os
import time

import pytest
from history_helpers import cli

EDIT = "A line added after the review.\n"


def _two_devices(tmp_path, capsys, original: str, edit):
    vault, laptop, phone = tmp_path / "vault", tmp_path / "laptop", tmp_path / "phone"
    vault.mkdir()
    note = vault / "n.md"
    note.write_text(original)
    cli(capsys, vault, phone, "due", now="2026-11-20T07:00")
    cli(capsys, vault, laptop, "rate", "n.md", "--rating", "good", now="2026-11-20T08:00")
    reviewed = note.read_text()
    if edit is not None:
        note.write_text(edit(reviewed))
    cli(capsys, vault, laptop, "undo", now="2026-11-20T08:05")
    undone = note.read_text()
    if edit is None:  # a file-sync conflict brings the reviewed copy back
        note.write_text(reviewed)
        old = time.time() - 600
        os.utime(note, (old, old))
    cli(capsys, vault, phone, "due", now="2026-11-20T09:00")
    return vault, laptop, phone, note, undone


def _commented(text: str) -> str:
    return text.replace("review_count: 1\n", "review_count: 1  # mine\n") + EDIT


CASES = {
    "commented key the review added": ("---\ncreated: 2026-11-01\n---\n# T\n", _commented),
    "review_count null": ("---\ncreated: 2026-11-01\nreview_count: null\n---\n# T\n", None),
    "quoted review_count": ("---\ncreated: 2026-11-01\nreview_count: '3'\n"
                            "last_reviewed: '2026-11-01'\nnext_review: '2026-11-10'\n---\n# T\n", None),
}


@pytest.mark.parametrize(("original", "edit"), CASES.values(), ids=CASES.keys())
def test_a_fully_undone_note_is_not_rewritten_on_every_sync(tmp_path, capsys, original, edit):
    vault, laptop, phone, note, _undone = _two_devices(tmp_path, capsys, original, edit)
    for data in (phone, laptop):
        cli(capsys, vault, data, "sync", "--full", now="2026-11-20T10:00")  # settles, if it must

    for data in (phone, laptop):
        out = cli(capsys, vault, data, "sync", "--full", now="2026-11-20T11:00")
        assert "updated the review keys of 0 notes" in out, out


def test_a_replay_keeps_the_review_count_null_the_undo_put_back(tmp_path, capsys):
    original = "---\ncreated: 2026-11-01\nreview_count: null\n---\n# T\n"
    _vault, _laptop, _phone, note, undone = _two_devices(tmp_path, capsys, original, None)
    assert undone == original  # the laptop's exact undo
    assert note.read_text() == original  # the phone's replay of the same undone review
