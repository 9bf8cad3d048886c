"""A review takes away what the user (or their tools) attached to the note file as extended
attributes: macOS Finder tags and "where from" (`com.apple.metadata:*`), a sync client's
marks (`user.com.dropbox.attributes`), a Linux `user.*` attribute set with `setfattr`. After one
`studyapp rate` the note has none left. The review writes the new text to a temp file and swaps
it in (`atomic.replace_checked`), copying the old file's mode onto it but not its extended
attributes, so everything but the bytes and the mode is the temp file's. README: "studyapp only
ever writes `created`, `last_reviewed`, `next_review`, `review_count` and `mastery_level`".
"""

from __future__ import annotations

import errno
import os

import pytest
from vault_fixtures import USERS_NOTE, studyapp_process, write

pytestmark = pytest.mark.skipif(not hasattr(os, "setxattr"), reason="no extended attributes on this system")


def test_rate_keeps_the_notes_extended_attributes(tmp_path):
    note = write(tmp_path / "vault" / "n.md", USERS_NOTE)
    try:
        os.setxattr(note, "user.finder.tags", b"interview\nattention")
    except OSError as exc:
        if exc.errno in (errno.ENOTSUP, errno.EOPNOTSUPP, errno.EPERM):
            pytest.skip(f"the file system of {tmp_path} keeps no user extended attributes")
        raise

    rated = studyapp_process(tmp_path, "rate", "n.md", "--rating", "good", now="2026-06-01T10:00:00")

    assert rated.returncode == 0, rated.stderr
    assert note.read_text(encoding="utf-8") != USERS_NOTE  # the review was written
    assert os.listxattr(note) == ["user.finder.tags"]
    assert os.getxattr(note, "user.finder.tags") == b"interview\nattention"
