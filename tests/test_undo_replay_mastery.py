"""A device replaying a fully undone review puts `last_reviewed`, `next_review` and
`review_count` back as they were, and takes out a `mastery_level` the review added, but leaves a
`mastery_level` the note already had at the value the undone review wrote: the laptop's undo
shows `mastery_level: 0.1`, the phone's replay of the same log leaves `mastery_level: 1.0`
(stats, the mastery by tag, now count a review that no longer exists). The event's
`values_before` holds the old mastery; `sync.owned_values` does not use it.
"""

from __future__ import annotations

import os
import time

from history_helpers import LEGACY, cli


def test_a_device_replaying_an_undone_review_puts_the_old_mastery_back(tmp_path, capsys):
    vault, laptop, phone = tmp_path / "vault", tmp_path / "laptop", tmp_path / "phone"
    vault.mkdir()
    note = vault / "a.md"
    note.write_text(LEGACY)  # mastery_level: 0.1
    cli(capsys, vault, phone, "due", now="2026-11-20T07:00")
    cli(capsys, vault, laptop, "rate", "a.md", "--rating", "good", now="2026-11-20T08:00")
    reviewed = note.read_bytes()
    assert b"mastery_level: 0.1\n" not in reviewed
    cli(capsys, vault, laptop, "undo", now="2026-11-20T08:05")
    assert note.read_text() == LEGACY
    note.write_bytes(reviewed)  # a file-sync conflict brings the reviewed copy back
    old = time.time() - 600
    os.utime(note, (old, old))

    cli(capsys, vault, phone, "due", now="2026-11-20T09:00")

    assert note.read_text() == LEGACY
