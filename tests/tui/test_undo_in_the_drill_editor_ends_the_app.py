"""ctrl+z (or ctrl+y) in the drill's editor, where it takes the code from taller than the editor
back to shorter, ends the whole app: the terminal shows "studyapp: error: internal error (a bug
in studyapp, please report it): ValueError: The document line index 30 is out of bounds...",
exit 70, and every line typed since the last save is gone.

Found in the real app: a learner typed the start of SDPA into the starter, pasted a helper
(with a tab-indented body and Chinese comments) below it, saw it went to the wrong place and
pressed ctrl+z. The same happens on a plain "select all (F7), Backspace, ctrl+z, ctrl+y".
The editor loses its vertical scrollbar during the undo, and Textual's scrollbar watcher
scrolls to the cursor before the undo has moved it back into the shorter text."""

from __future__ import annotations

import os
import subprocess
import time
from functools import partial
from pathlib import Path

from .test_tui_tmux import app_command, pane_text, pytestmark, tmux, wait_in  # noqa: F401 - the module's marks (serial, tmux)

SESSION = f"tui-studyapp-editor-undo-{os.getpid()}"
TYPED = "    scores = Q @ K.transpose(-2, -1)"
"""Typed key by key at the start of the starter's `raise` line (where the cursor opens)."""
PASTED = ("def helper(x):\n"
          "\t# 缩放：除以根号 d_k\n"
          "\ty = x * 2  # 中文注释\n"
          "\treturn y\n"
          "\n"
          "\n"
          "def other(x):\n"
          "\t# 掩码\n"
          "\treturn x\n"
          "\n")
"""A block pasted (bracketed paste) below the typed line: enough lines to make the editor scroll."""


screen = partial(pane_text, SESSION)
wait_for = partial(wait_in, SESSION)


def press(key: str) -> None:
    tmux("send-keys", "-t", SESSION, key)
    time.sleep(0.7)


def open_sdpa(tmp_path: Path, rows: int) -> None:
    vault = tmp_path / "vault"
    (vault / ".studyapp" / "log").mkdir(parents=True)  # a returning learner: no first-run toast
    # The pane outlives the app, so a crash's one line stays readable. COLUMNS/LINES, when the
    # tmux server inherited them, would pin the app to their size whatever the window's.
    command = "unset COLUMNS LINES; " + app_command(tmp_path, vault) + "; echo EXIT=$?; sleep 60"
    tmux("new-session", "-d", "-s", SESSION, "-x", "100", "-y", str(rows), command)
    wait_for("Nothing due")
    press("d")
    wait_for("Scaled dot-product attention")
    press("Enter")
    wait_for("Run grader")
    wait_for("def scaled_dot_product_attention")
    time.sleep(1.0)


def still_running(shown: str) -> None:
    assert "internal error" not in shown and "EXIT=" not in shown, f"the app ended:\n{shown}"


def test_undo_of_a_paste_keeps_the_app_and_the_typed_line(tmp_path):
    try:
        open_sdpa(tmp_path, rows=40)  # the 29-line starter fits the editor; starter + paste does not
        for char in TYPED:
            tmux("send-keys", "-t", SESSION, "-l", char)
        press("Enter")
        wait_for(TYPED.strip())
        (tmp_path / "paste.txt").write_text(PASTED, encoding="utf-8")
        tmux("load-buffer", "-b", SESSION, str(tmp_path / "paste.txt"))
        tmux("paste-buffer", "-p", "-d", "-b", SESSION, "-t", SESSION)
        wait_for("def other(x):")
        time.sleep(1.5)  # the paste is its own undo step
        press("C-z")  # the paste went to the wrong place: take it back
        time.sleep(1.5)
        shown = screen()
        still_running(shown)
        assert "def other(x):" not in shown, shown  # the paste is undone
        assert TYPED.strip() in shown, f"the typed line is gone:\n{shown}"
    finally:
        subprocess.run(["tmux", "kill-session", "-t", SESSION], capture_output=True)


def test_select_all_delete_undo_redo_keeps_the_app(tmp_path):
    try:
        open_sdpa(tmp_path, rows=24)  # the starter is taller than the editor here
        press("F7")
        press("BSpace")  # start over
        press("C-z")  # no: back
        wait_for("def scaled_dot_product_attention")
        press("C-y")  # yes after all
        time.sleep(1.5)
        still_running(screen())
    finally:
        subprocess.run(["tmux", "kill-session", "-t", SESSION], capture_output=True)
