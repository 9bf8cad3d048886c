"""A note may have any name the file system allows (255 bytes): the temp file an atomic write
puts beside it, and the copy a conflict keeps, must fit too, and still be recognised as ours
(stale-temp sweep, error messages)."""

from __future__ import annotations

import errno
import os
import re
import time

from vault_fixtures import write

from studyapp import atomic
from studyapp.cli import main
from studyapp.errors import user_message
from studyapp.vault import Vault

LONGEST = "注意力机制" * 16 + "缩放点积.md"
"""255 bytes: the longest name ext4 and APFS allow, three bytes a character."""
TEMP = re.compile(r"^\..+\.[0-9a-f]{8}" + re.escape(atomic.TEMP_SUFFIX) + "$")


def test_the_longest_name_is_255_bytes():
    assert len(LONGEST.encode()) == 255


def test_temp_files_of_the_longest_name_fit_and_are_recognised(tmp_path):
    """Each of the three writers makes its temp file beside the target: every name fits 255
    bytes, is hidden and ends in `.<8 hex>.studyapp-tmp` (what the sweep and errors.py look for)."""
    target = tmp_path / LONGEST
    temp = atomic.temp_path(target)
    assert temp.parent == tmp_path
    assert len(temp.name.encode()) <= 255 and TEMP.match(temp.name), temp.name
    assert temp.name.startswith(".注意力机制") and "…" in temp.name  # the user still knows it
    short = atomic.temp_path(tmp_path / "a.md").name
    assert short.startswith(".a.md.") and "…" not in short  # short names as before

    atomic.atomic_create_bytes(target, b"one\n")
    atomic.atomic_write_bytes(target, b"two\n")
    atomic.replace_checked(target, lambda raw: raw + b"three\n")
    assert target.read_bytes() == b"two\nthree\n"
    assert os.listdir(tmp_path) == [LONGEST]  # no temp file left


def test_a_cut_temp_name_is_reported_as_the_notes(tmp_path):
    """`no space left` on the temp file of a long note names the note (cut, marked `…`), not
    the temp file."""
    temp = atomic.temp_path(tmp_path / LONGEST)
    message = user_message(OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(temp)))
    assert message is not None and "studyapp-tmp" not in message, message
    assert f"{tmp_path}/注意力机制" in message and "…: no space left" in message, message


def test_an_abandoned_temp_file_of_a_long_note_is_swept(tmp_path):
    vault = tmp_path / "vault"
    write(vault / LONGEST, "# 缩放点积\n")
    stale = atomic.temp_path(vault / LONGEST)
    stale.write_bytes(b"partial")
    old = time.time() - 2 * 3600
    os.utime(stale, (old, old))
    assert [n.path for n in Vault(vault).load().notes] == [LONGEST]
    assert not stale.exists()


def test_a_conflict_copy_of_the_longest_name_fits_and_is_no_note(tmp_path):
    """The copy that keeps an edit which could not be merged: 25 bytes longer than the note's
    name, it could not be written, and the edit it holds would be lost."""
    copy = atomic._new_conflict_copy(tmp_path / LONGEST, lambda name: atomic.atomic_create_bytes(name, b"edit"))
    assert len(copy.name.encode()) <= 255 and copy.name.startswith("注意力机制"), copy.name
    assert not copy.name.endswith(".md") and ".conflict-" in copy.name
    assert copy.read_bytes() == b"edit"
    short = atomic._new_conflict_copy(tmp_path / "a.md", lambda name: atomic.atomic_create_bytes(name, b"x"))
    assert short.name.startswith("a.md.conflict-")


def test_rate_writes_a_note_with_the_longest_name(tmp_path, capsys):
    """`rate` gives a block-less note its block and the review: the temp file's name was 23
    bytes too long ("File name too long"), and the rating was not recorded."""
    vault = tmp_path / "vault"
    note = write(vault / LONGEST, "# 缩放点积\n答案\n")
    code = main(["rate", LONGEST, "--rating", "good", "--vault", str(vault), "--now", "2026-03-02T09:00"])
    assert code == 0, capsys.readouterr().err
    text = note.read_text(encoding="utf-8")
    assert "review_count: 1\n" in text and text.endswith("# 缩放点积\n答案\n")
