"""A learner on Today types `n`, then `/` and a word to filter the notes, at an ordinary fast
pace (a key every 60 ms). On the Notes screen's first visit the filter shows "oft" for "soft",
and in some runs the `s` suspended the first note of the list (a `suspend` line in the log).
The keys typed while the screen fills its list for the first time wait in the queue and come
in together; the letter right after `/` is routed as if the focus had not moved yet: to the
screen's bindings (`s` suspends the selected note, `o` opens it), or, when the move to the
filter lands while it is on its way, to no widget that takes it. Seen with a log of the keys
in the screen: "key slash", "key s" 0.3 ms later, then "suspend"; or "key s" reaching the
screen with the filter focused, and the filter's first value "o". README: "While ... a filter
has the focus, keys are text".

It depends on timing: on a loaded 2-core machine it failed in each of 3 plain runs, and in 3 of
6 runs with a key log written to a file (which slows the screen's key handling)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

from .test_tui_tmux import pytestmark, tmux  # noqa: F401 - the module's marks (serial, tmux)

SESSION = f"tui-studyapp-notes-filter-pace-{os.getpid()}"
ROOT = Path(__file__).resolve().parents[2]


def screen() -> str:
    return tmux("capture-pane", "-p", "-t", SESSION)


def wait_for(text: str, timeout: float = 30.0) -> str:
    deadline = time.monotonic() + timeout
    shown = ""
    while time.monotonic() < deadline:
        shown = screen()
        if text in shown:
            return shown
        time.sleep(0.05)
    raise AssertionError(f"{text!r} never appeared; the screen was:\n{shown}")


def test_a_filter_typed_right_after_n_keeps_every_letter(tmp_path):
    data = tmp_path / "data"
    # no vault given: the starter deck, as a new user gets it (the returning learner's log
    # folder is made by the first run; its toast goes by before the keys are typed)
    command = (f"unset COLUMNS LINES; cd {ROOT} && HOME={tmp_path} PYTHONPATH={ROOT} "
               f"{sys.executable} -m studyapp --data-dir {data} --now 2026-11-22T09:00:00+08:00")
    tmux("new-session", "-d", "-s", SESSION, "-x", "100", "-y", "30", command)
    try:
        wait_for("press r")
        time.sleep(3.0)
        for key in ("n", "/", "s", "o", "f", "t"):
            tmux("send-keys", "-t", SESSION, "-l", key)
            time.sleep(0.06)
        wait_for("Filter")
        time.sleep(2.0)
        shown = screen()
    finally:
        subprocess.run(["tmux", "kill-session", "-t", SESSION], capture_output=True)
    log = "".join(p.read_text(encoding="utf-8") for p in (data / "vault" / ".studyapp" / "log").glob("*.jsonl"))
    assert '"suspend"' not in log, f"a letter typed for the filter suspended a note:\n{log}"
    filter_line = next((line for line in shown.splitlines() if "▊" in line and "Vault" not in line
                        and "▔" not in line), "")
    assert "soft" in filter_line, f"the filter lost letters typed into it:\n{shown}"
