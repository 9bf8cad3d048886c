"""A note whose file name is stored decomposed (NFD, as a Mac writes `café.md`: `e` + U+0301)
cannot be rated, suspended or unsuspended by the name `due` shows for it.

`due` lists the note as `café.md`, and `due --json` gives its "id" as the composed (NFC) form
`caf\\u00e9.md` (`vault.model.note_id`: "NFC-normalised so macOS and Linux agree"). Typing that
name (a keyboard gives the composed é), or passing the id from `due --json`, answers
"studyapp: error: no such note in the vault: café.md": the two names look the same, and the
vault lists the note. Only the exact decomposed bytes are accepted.
"""

from __future__ import annotations

import json
import os
import subprocess
import unicodedata
from pathlib import Path

import pytest
from vault_fixtures import studyapp_process, write

COMPOSED = unicodedata.normalize("NFC", "café.md")
DECOMPOSED = unicodedata.normalize("NFD", "café.md")
NOTE = "---\nreview_count: 0\nnext_review: 2026-01-01\n---\n# Café au lait\n\nCoffee and milk.\n"


def _studyapp(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    return studyapp_process(tmp_path, *args, now="2026-06-01T09:00")


@pytest.mark.parametrize("command", [["rate", "--rating", "good"], ["suspend"]])
def test_the_id_due_gives_names_the_note(tmp_path, command):
    assert COMPOSED != DECOMPOSED
    note = write(tmp_path / "vault" / DECOMPOSED, NOTE)
    listed = _studyapp(tmp_path, "due", "--json")
    assert listed.returncode == 0, listed.stderr
    (entry,) = json.loads(listed.stdout)
    assert entry["id"] == COMPOSED  # what due calls the note

    result = _studyapp(tmp_path, command[0], entry["id"], *command[1:])
    assert result.returncode == 0, (
        f"`studyapp {command[0]} {entry['id']}` (the note's id, the name a keyboard types) was "
        f"refused: {result.stderr.strip()}")
    if command[0] == "rate":
        assert "review_count: 1\n" in note.read_text(encoding="utf-8")
    assert sorted(os.listdir(tmp_path / "vault")) == [".studyapp", DECOMPOSED]  # no second file
