"""In a drill's code editor, a learner selects two lines they typed (shift+down twice from the
first line's start) and presses Tab to indent them, as in any code editor; shift+tab, which
the app binds to dedent the selected lines, works that way. Tab instead replaces the selection
with four spaces: the two lines are gone, and ctrl+s (or leaving, which saves) writes the file
without them. Found in tmux with the sdpa drill."""

from __future__ import annotations

import os
import subprocess
import time
from functools import partial

from .test_tui_tmux import app_command, pane_text, pytestmark, tmux, wait_in  # noqa: F401 - the module's marks (serial, tmux)

SESSION = f"tui-studyapp-tab-selection-{os.getpid()}"
LINES = ("scores = Q @ K.transpose(-2, -1)", "weights = scores.softmax(dim=-1)")
"""Typed key by key at the start of the starter's `raise` line (where the cursor opens)."""


screen = partial(pane_text, SESSION)
wait_for = partial(wait_in, SESSION)


def press(key: str) -> None:
    tmux("send-keys", "-t", SESSION, key)
    time.sleep(0.5)


def test_tab_over_two_selected_lines_indents_them(tmp_path):
    vault = tmp_path / "vault"
    (vault / ".studyapp" / "log").mkdir(parents=True)  # a returning learner: no first-run toast
    command = "unset COLUMNS LINES; " + app_command(tmp_path, vault)
    tmux("new-session", "-d", "-s", SESSION, "-x", "120", "-y", "36", command)
    try:
        wait_for("Nothing due")
        press("d")
        wait_for("Scaled dot-product attention")
        press("Enter")
        wait_for("def scaled_dot_product_attention")
        time.sleep(1.0)
        for line in LINES:
            for char in line:
                tmux("send-keys", "-t", SESSION, "-l", char)
            press("Enter")
        wait_for(LINES[1])
        press("Up")
        press("Up")  # the start of the first typed line
        press("S-Down")
        press("S-Down")  # both typed lines selected
        press("Tab")  # indent them
        time.sleep(1.0)
        shown = screen()
        press("C-s")
        wait_for("Saved sdpa.py")
    finally:
        subprocess.run(["tmux", "kill-session", "-t", SESSION], capture_output=True)
    saved = (tmp_path / "data" / "workspace" / "sdpa.py").read_text(encoding="utf-8")
    for line in LINES:
        assert f"    {line}\n" in saved, f"Tab deleted the selected lines:\n{saved}\n\nscreen:\n{shown}"
