"""The real app in a real terminal: tmux runs `studyapp`, we type like a learner and read the screen."""

from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from .sample_vault import write_vault

pytestmark = [
    pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed"),
    pytest.mark.slow,
    pytest.mark.serial,
]

SESSION = f"tui-studyapp-test-{os.getpid()}"
NOTE = "注意力/缩放因子.md"
POLL_SECONDS = 0.05
"""How often the pane is read while waiting for the app (one `tmux capture-pane`, a few ms)."""


def tmux(*args: str) -> str:
    return subprocess.run(["tmux", *args], check=True, capture_output=True, text=True).stdout


def pane_text(session: str) -> str:
    """What a tmux session's pane shows now."""
    return tmux("capture-pane", "-p", "-t", session)


def wait_in(session: str, text: str, timeout: float = 30.0) -> str:
    """Poll the session's pane until `text` shows (the app paints asynchronously); fail with the
    last screen. The other tmux tests bind it to their own session (`functools.partial`)."""
    deadline = time.monotonic() + timeout
    screen = ""
    while time.monotonic() < deadline:
        screen = pane_text(session)
        if text in screen:
            return screen
        time.sleep(POLL_SECONDS)
    raise AssertionError(f"{text!r} never appeared; the screen was:\n{screen}")


def wait_for(text: str, timeout: float = 30.0) -> str:
    return wait_in(SESSION, text, timeout)


def app_command(tmp_path: Path, vault: Path) -> str:
    repo = Path(__file__).resolve().parents[2]
    return " ".join([
        f"cd {repo} &&",
        f"PYTHONPATH={repo}{os.pathsep}{os.environ.get('PYTHONPATH', '')}",
        f"{sys.executable} -m studyapp --vault {vault} --data-dir {tmp_path / 'data'}",
        "--now 2026-11-22T09:00:00+08:00",
    ])


def wait_for_exit(timeout: float = 15.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if SESSION not in subprocess.run(["tmux", "ls"], capture_output=True, text=True).stdout:
            return
        time.sleep(POLL_SECONDS)
    raise AssertionError("the app did not quit on ctrl+q")


def press(*keys: str) -> None:
    """Keys bound to an action (F7, arrows, End) reach the editor's bindings after bubbling up
    from it, so a character typed in the same millisecond could overtake them: pause as a
    learner would."""
    for key in keys:
        tmux("send-keys", "-t", SESSION, key)
    time.sleep(0.5)


def type_like_a_learner(text: str) -> None:
    """One key at a time, as typed (never pasted): each character is its own key event."""
    for line_number, line in enumerate(text.split("\n")):
        if line_number:
            tmux("send-keys", "-t", SESSION, "Enter")
        for char in line:
            tmux("send-keys", "-t", SESSION, "-l", char)


def test_review_one_note_with_space_then_3_in_tmux(tmp_path):
    vault = write_vault(tmp_path / "vault", broken=False)
    before = (vault / NOTE).read_text(encoding="utf-8")
    tmux("new-session", "-d", "-s", SESSION, "-x", "100", "-y", "30", app_command(tmp_path, vault))
    try:
        wait_for("New · Learn · Review")
        wait_for("waiting — press r")
        tmux("send-keys", "-t", SESSION, "r")
        wait_for("为什么注意力分数要除以根号")
        tmux("send-keys", "-t", SESSION, "Space")
        wait_for("3 Good")
        tmux("send-keys", "-t", SESSION, "3")
        wait_for("1 reviewed")
        tmux("send-keys", "-t", SESSION, "C-q")
        wait_for_exit()
    finally:
        subprocess.run(["tmux", "kill-session", "-t", SESSION], capture_output=True)
    after = (vault / NOTE).read_text(encoding="utf-8")
    assert after != before
    assert "last_reviewed: '2026-11-22'" in after
    assert "review_count: 4" in after


WRONG_SDPA = """import math
import torch


def scaled_dot_product_attention(Q, K, V, mask=None):
    scores = Q @ K.transpose(-2, -1)
    if mask is not None:
        scores = scores.masked_fill(mask == 0, float("-inf"))
    return torch.softmax(scores, dim=-1) @ V"""
"""Forgets to divide by sqrt(d_k): the grader names that mistake."""
FIX = " / math.sqrt(Q.shape[-1])"
"""Typed at the end of the `scores = ...` line, three lines above the last."""


def test_the_daily_loop_review_drill_fix_and_back_in_tmux(tmp_path):
    """Review a note, jump to its drill, type a wrong SDPA key by key, run it, fix it, pass, go
    back, rate, suspend the next note, quit: the database holds exactly what the learner did."""
    vault = write_vault(tmp_path / "vault", broken=False)
    # A returning learner: the one-time note on where the review log lives (a toast that
    # would cover the results pane for its first seconds) was seen on an earlier run.
    (vault / ".studyapp" / "log").mkdir(parents=True)
    tmux("new-session", "-d", "-s", SESSION, "-x", "120", "-y", "36", app_command(tmp_path, vault))
    try:
        wait_for("waiting — press r")
        tmux("send-keys", "-t", SESSION, "r")
        wait_for("为什么注意力分数要除以根号")
        tmux("send-keys", "-t", SESSION, "Space")
        wait_for("3 Good")
        tmux("send-keys", "-t", SESSION, "p")
        wait_for("Run grader")
        # The editor has the focus: select everything (F7) and type over it, key by key.
        press("F7")
        type_like_a_learner(WRONG_SDPA)
        wait_for("return torch.softmax(scores, dim=-1) @ V")
        tmux("send-keys", "-t", SESSION, "C-r")
        screen = wait_for("FAIL", timeout=120)
        assert "Looks like:" in screen and "sqrt(d_k)" in screen, screen
        assert "Hint:" in screen, screen
        press("Up", "Up", "Up", "End")
        type_like_a_learner(FIX)
        wait_for("K.transpose(-2, -1) / math.sqrt(Q.shape[-1])")
        tmux("send-keys", "-t", SESSION, "C-r")
        wait_for("PASS", timeout=120)
        tmux("send-keys", "-t", SESSION, "Escape")
        wait_for("3 Good")  # back on the review, the answer still shown
        tmux("send-keys", "-t", SESSION, "3")
        wait_for("1 reviewed")
        next_title = "多头注意力相比单头有什么好处"
        wait_for(next_title)
        tmux("send-keys", "-t", SESSION, "s")
        wait_for("Suspended")
        tmux("send-keys", "-t", SESSION, "C-q")
        wait_for_exit()
    finally:
        subprocess.run(["tmux", "kill-session", "-t", SESSION], capture_output=True)

    db = sqlite3.connect(tmp_path / "data" / "studyapp.sqlite3")
    reviews = db.execute("SELECT path, rating FROM reviews").fetchall()
    assert reviews == [(NOTE, 3)]
    suspended = db.execute(
        "SELECT n.path FROM cards c JOIN notes n ON n.key = c.note_key WHERE c.suspended").fetchall()
    assert suspended == [("注意力/多头.md",)]
    attempts = db.execute("SELECT drill_id, verdict FROM drill_attempts ORDER BY id").fetchall()
    assert attempts == [("sdpa", "fail"), ("sdpa", "pass")]
    saved = (tmp_path / "data" / "workspace" / "sdpa.py").read_text(encoding="utf-8")
    assert "scores = Q @ K.transpose(-2, -1) / math.sqrt(Q.shape[-1])" in saved
