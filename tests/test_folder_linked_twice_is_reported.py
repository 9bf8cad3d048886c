"""A folder of the vault reached under several names (two symbolic links to one folder, or a link
beside the folder itself) was scanned once and its other names dropped without a word, where the
README promises that the other paths are reported. A note is studied under one path; each other
name of its folder is now named, with the path its notes are studied under."""

from __future__ import annotations

import json
import os

from vault_fixtures import studyapp_process, write

NOTE = "---\nnext_review: 2026-01-01\n---\n# A\n"


def test_a_folder_linked_twice_is_reported_once_per_other_name(tmp_path):
    vault = tmp_path / "vault"
    write(vault / "real" / "a.md", NOTE)
    os.symlink("real", vault / "a")
    os.symlink("real", vault / "zz")

    due = studyapp_process(tmp_path, "due", "--json", now="2026-06-01T10:00:00")

    assert due.returncode == 0, due.stderr
    assert len(json.loads(due.stdout)) == 1  # one note, under one path
    reported = [line for line in due.stderr.splitlines() if "the same folder as" in line]
    assert len(reported) == 2, due.stderr
    studied = json.loads(due.stdout)[0]["path"].split("/")[0]
    assert all(f"the same folder as {studied}" in line for line in reported), due.stderr


def test_a_link_to_an_enclosing_folder_is_reported_not_followed_forever(tmp_path):
    vault = tmp_path / "vault"
    write(vault / "sub" / "a.md", NOTE)
    os.symlink("..", vault / "sub" / "up")

    due = studyapp_process(tmp_path, "due", "--json", now="2026-06-01T10:00:00")

    assert due.returncode == 0, due.stderr
    assert [n["path"] for n in json.loads(due.stdout)] == ["sub/a.md"]
    assert "sub/up" in due.stderr and "the same folder as" in due.stderr, due.stderr
