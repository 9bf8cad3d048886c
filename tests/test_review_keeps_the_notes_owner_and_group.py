"""A review run by another account than the note's owner (root, or a member of the group a shared
vault belongs to) gave the note the reviewer's owner and group: the new text is written to a temp
file and swapped in, and only the mode was carried over. In a vault shared through a group, the
others could then no longer write the note. The swapped-in file keeps the note's owner and group
where the reviewer may set them (root may; a group member may keep the group)."""

from __future__ import annotations

import os

import pytest
from vault_fixtures import USERS_NOTE, studyapp_process, write

pytestmark = pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0,
                                reason="only root can give a file to another owner here")


def test_rate_keeps_the_notes_owner_and_group(tmp_path):
    note = write(tmp_path / "vault" / "n.md", USERS_NOTE)
    os.chown(note, 1234, 5678)

    rated = studyapp_process(tmp_path, "rate", "n.md", "--rating", "good", now="2026-06-01T10:00:00")

    assert rated.returncode == 0, rated.stderr
    assert note.read_text(encoding="utf-8") != USERS_NOTE  # the review was written
    assert (note.stat().st_uid, note.stat().st_gid) == (1234, 5678)
