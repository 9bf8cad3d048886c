"""`studyapp rate` while an editor is saving the note in place is refused with a false reason.

What the user sees: their editor saves the note the way many do (truncate, then write, the file
held open for writing until done; a large note or a slow disk makes that take a moment). A
`studyapp rate` run in that moment fails, exit 1, with

    studyapp: error: a.md: metadata block opened with '---' but never closed

(or "'last_reviewed' was edited meanwhile", or "not valid UTF-8 (byte 0xe7 at offset 2999)",
depending on where the editor is), although the note is fine and nobody touched its review keys:
the rating is lost unless the user runs it again.

Why: `ReviewService._record_review` starts from `Vault.read_note`, a plain `read_bytes()` with
no read lease, so it reads the half-written file. README: "Reads take a read lease, which waits
until no program holds the note open for writing, so an editor writing in place (appending, or
truncating and rewriting) finishes before the comparison" — the write path
(`atomic.read_settled`) waits for the editor; the first read does not.
"""

from __future__ import annotations

import subprocess
import sys
import time

from vault_fixtures import USERS_NOTE, studyapp_process, write

NOW = "2026-04-06T10:00"
EDIT = "- 用户在编辑器里加的一行\n"

EDITOR_SAVING_IN_PLACE = """
import sys, time
from pathlib import Path
note, half, edit = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3]
data = note.read_bytes() + edit.encode("utf-8")
with open(note, "r+b") as handle:
    handle.seek(0)
    handle.truncate()
    handle.write(data[:60])      # inside the metadata block
    handle.flush()
    half.touch()
    time.sleep(1.0)              # still saving
    handle.write(data[60:])
"""


def test_rate_while_an_editor_saves_the_note_in_place_waits_and_records_the_review(tmp_path):
    note = write(tmp_path / "vault" / "a.md", USERS_NOTE)
    assert studyapp_process(tmp_path, "due", now=NOW).returncode == 0
    half = tmp_path / "half"
    editor = subprocess.Popen([sys.executable, "-c", EDITOR_SAVING_IN_PLACE, str(note), str(half), EDIT])
    try:
        deadline = time.monotonic() + 60
        while not half.exists() and time.monotonic() < deadline:
            time.sleep(0.002)
        rated = studyapp_process(tmp_path, "rate", "a.md", "--rating", "good", now=NOW)
        editor.wait(timeout=60)
    finally:
        if editor.poll() is None:
            editor.kill()
    text = note.read_text(encoding="utf-8")
    assert EDIT in text
    assert rated.returncode == 0, rated.stderr
    assert "review_count: 1\n" in text
