"""Ctrl-C on a `studyapp rate` that waits for an editor to finish writing loses the edit.

What the user sees: their editor has the note open and is saving it (it opened the note for
writing just before `rate` swapped its new copy in). `rate` has swapped already and now waits
(up to 2 s, on the read lease) for the editor to finish, so that it can compare. The command
seems to hang; the user presses Ctrl-C. `rate` exits 130 ("interrupted"), yet:

  - the note holds the review's keys (review_count went up) on the text from BEFORE the edit,
  - the line the editor saved is gone: the editor wrote into the file `rate` had displaced,
    which sat at the hidden temp path, and the `finally:` of `atomic.replace_checked`
    unlinks that temp file on the way out (it only expects to hold studyapp's own copy there),
  - and the review is in neither the database nor the log (the journal row is cleared),
    so the note's keys disagree with the history too.

(A SIGTERM/SIGKILL at the same moment leaves the edit only in the hidden
`.a.md.<hex>.studyapp-tmp`, which a later scan sweeps as a stale temp after an hour, while the
next command "finishes the interrupted review".)

README: "no external edit is ever lost"; "An edit saved while studyapp writes is kept".
The timing is made deterministic by wrapping `atomic._exchange` in the `rate` process: on its
first call it lets an "editor" process open the note for writing, then swaps.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from vault_fixtures import USERS_NOTE, studyapp_process, write

ROOT = Path(__file__).resolve().parents[1]
NOW = "2026-04-06T10:00"
EDIT = "- 用户在编辑器里保存的一行 `keep_me()`\n"

RATE_WITH_AN_EDITOR_OPENING_THE_NOTE = """
import sys, time
from pathlib import Path
from studyapp import atomic
go, opened = Path(sys.argv.pop(1)), Path(sys.argv.pop(1))
real = atomic._exchange
calls = []
def exchange(a, b):
    if not calls:  # the editor opens the note for writing just before the swap
        go.touch()
        while not opened.exists():
            time.sleep(0.005)
    calls.append(1)
    return real(a, b)
atomic._exchange = exchange
from studyapp.cli import run
sys.exit(run())
"""

EDITOR = """
import sys, time
from pathlib import Path
note, go, opened, edit = Path(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3]), sys.argv[4]
deadline = time.monotonic() + 60
while not go.exists() and time.monotonic() < deadline:
    time.sleep(0.005)
with open(note, "r+b") as handle:   # an editor saving in place, a little slowly
    opened.touch()
    time.sleep(1.2)
    handle.seek(0, 2)
    handle.write(edit.encode("utf-8"))
"""


@pytest.mark.parametrize(("sig", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)], ids=["ctrl-c", "sigterm"])
def test_ctrl_c_while_rate_waits_for_an_editor_keeps_the_editors_edit(tmp_path, sig, code):
    note = write(tmp_path / "vault" / "a.md", USERS_NOTE)
    assert studyapp_process(tmp_path, "due", now=NOW).returncode == 0
    go, opened = tmp_path / "go", tmp_path / "opened"
    env = dict(os.environ, PYTHONPATH=str(ROOT), HOME=str(tmp_path / "home"))
    env.pop("STUDYAPP_VAULT", None)
    editor = subprocess.Popen([sys.executable, "-c", EDITOR, str(note), str(go), str(opened), EDIT])
    rate = subprocess.Popen([sys.executable, "-c", RATE_WITH_AN_EDITOR_OPENING_THE_NOTE, str(go), str(opened),
                             "rate", "a.md", "--rating", "good", "--vault", str(tmp_path / "vault"),
                             "--data-dir", str(tmp_path / "data"), "--now", NOW],
                            env=env, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 60
        while not opened.exists() and time.monotonic() < deadline:
            time.sleep(0.005)
        time.sleep(0.5)  # `rate` has swapped and waits for the editor: the user presses Ctrl-C
        rate.send_signal(sig)
        out, err = rate.communicate(timeout=60)
        editor.wait(timeout=60)
    finally:
        for process in (rate, editor):
            if process.poll() is None:
                process.kill()
    assert rate.returncode == code, (out, err)
    text = note.read_text(encoding="utf-8")
    assert EDIT in text, ("the editor's saved line is gone", text[:400], sorted(p.name for p in note.parent.iterdir()))
