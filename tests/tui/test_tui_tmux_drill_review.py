"""A drill as a review item, used as a learner uses it: the real app in tmux, the real grader
worker. Review a note that declares `drills: [rope]`, take the RoPE drill that comes up after
it, type a correct `apply_rope` key by key, grade it, accept the proposed rating, and see the
drill's next due date move in `studyapp drills --json`."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = [
    pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed"),
    pytest.mark.slow,
    pytest.mark.serial,
]

ROOT = Path(__file__).resolve().parents[2]
SESSION = f"qa-drills-tmux-rope-{os.getpid()}"
NOW = "2026-11-22T09:00:00+08:00"
TODAY = "2026-11-22"
POLL_SECONDS = 0.05
"""How often the pane is read while waiting for the app (one `tmux capture-pane`, a few ms)."""

NOTE = """---
created: '2026-11-01'
last_reviewed: '2026-11-12'
next_review: '2026-11-20'
review_count: 3
difficulty: medium
mastery_level: 0.3
drills: [rope]
tags: [attention]
---
# How does RoPE encode relative position?

## 面试标准答案
Each pair of dims turns by position × frequency, so q·k depends only on the offset i − j.
"""

APPLY_ROPE = """import torch


def apply_rope(x, offset=0, base=10000.0, interleaved=False):
    n, d = x.shape[-2:]
    t = torch.float64 if x.dtype == torch.float64 else torch.float32
    pos = torch.arange(offset, offset + n, dtype=t, device=x.device)
    ang = pos[:, None] * base ** (-torch.arange(0, d, 2, dtype=t, device=x.device) / d)
    c, s = ang.cos(), ang.sin()
    y = x.to(t)
    if interleaved:
        a, b = y[..., 0::2], y[..., 1::2]
        return torch.stack((a * c - b * s, a * s + b * c), -1).flatten(-2).to(x.dtype)
    a, b = y[..., : d // 2], y[..., d // 2 :]
    return torch.cat((a * c - b * s, a * s + b * c), -1).to(x.dtype)"""
"""Short, correct, and typed as a learner types it: both layouts, the offset, float32 angles."""


def tmux(*args: str) -> str:
    return subprocess.run(["tmux", *args], check=True, capture_output=True, text=True).stdout


def screen() -> str:
    return tmux("capture-pane", "-p", "-t", SESSION)


def wait_for(text: str, timeout: float = 30.0) -> str:
    deadline = time.monotonic() + timeout
    shown = ""
    while time.monotonic() < deadline:
        shown = screen()
        if text in shown:
            return shown
        time.sleep(POLL_SECONDS)
    raise AssertionError(f"{text!r} never appeared; the screen was:\n{shown}")


def type_like_a_learner(text: str) -> None:
    """One key event per character (never pasted); one tmux call per line, each character its
    own `send-keys -l` command in it, so typing 600 characters takes seconds, not a minute. The
    editor does not indent by itself: the indentation is typed too."""
    for line_number, line in enumerate(text.split("\n")):
        keys: list[str] = ["send-keys", "-t", SESSION, "Enter"] if line_number else []
        for char in line:
            keys += [";"] * bool(keys) + ["send-keys", "-t", SESSION, "-l", char]
        if keys:
            tmux(*keys)


def studyapp_cli(home: Path, *args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.run(
        [sys.executable, "-m", "studyapp", "--vault", str(home / "vault"), "--data-dir",
         str(home / "data"), "--now", NOW, *args],
        capture_output=True, text=True, env=env, cwd=ROOT, timeout=60)


def rope_listing(home: Path) -> dict:
    listed = studyapp_cli(home, "drills", "--json")
    assert listed.returncode == 0, listed.stderr
    return {d["id"]: d for d in json.loads(listed.stdout)}["rope"]


def test_a_due_rope_drill_typed_graded_and_rated_in_tmux(tmp_path):
    vault = tmp_path / "vault"
    (vault / ".studyapp" / "log").mkdir(parents=True)  # a returning learner: no first-run toast
    (vault / "rope.md").write_text(NOTE, encoding="utf-8")
    assert rope_listing(tmp_path)["next_due"] is None  # not introduced before its note's review

    command = (f"cd {ROOT} && PYTHONPATH={ROOT} {sys.executable} -m studyapp --vault {vault} "
               f"--data-dir {tmp_path / 'data'} --now {NOW}")
    tmux("new-session", "-d", "-s", SESSION, "-x", "120", "-y", "36", command)
    try:
        wait_for("waiting — press r")
        tmux("send-keys", "-t", SESSION, "r")
        wait_for("How does RoPE encode relative position")
        tmux("send-keys", "-t", SESSION, "Space")
        wait_for("3 Good")
        tmux("send-keys", "-t", SESSION, "3")
        wait_for("New drill")  # the notes are done: the drill the note declares comes up
        assert rope_listing(tmp_path)["due_now"] is True
        tmux("send-keys", "-t", SESSION, "Enter")
        wait_for("Run grader")
        time.sleep(0.5)
        tmux("send-keys", "-t", SESSION, "F7")  # select the starter, type over it
        time.sleep(0.5)
        type_like_a_learner(APPLY_ROPE)
        wait_for("-1).to(x.dtype)")  # the last line's end (the editor scrolls sideways)
        tmux("send-keys", "-t", SESSION, "C-r")
        shown = wait_for("Proposed rating: Good", timeout=60)
        assert "PASS" in shown, shown
        assert "F6 (to the results), then Enter records it" in shown, shown  # the keys stay text
        tmux("send-keys", "-t", SESSION, "F6")
        time.sleep(0.3)
        tmux("send-keys", "-t", SESSION, "Enter")  # accept it
        wait_for("Good: next in")
        tmux("send-keys", "-t", SESSION, "C-q")
        deadline = time.monotonic() + 15
        while SESSION in subprocess.run(["tmux", "ls"], capture_output=True, text=True).stdout:
            assert time.monotonic() < deadline, "the app did not quit on ctrl+q"
            time.sleep(POLL_SECONDS)
    finally:
        subprocess.run(["tmux", "kill-session", "-t", SESSION], capture_output=True)

    rope = rope_listing(tmp_path)
    assert rope["next_due"] is not None and rope["next_due"] > TODAY, rope
    assert rope["due_now"] is False and (rope["passes"], rope["attempts"]) == (1, 1)
    assert rope["status"] == "passed"
    saved = (tmp_path / "data" / "workspace" / "rope.py").read_text(encoding="utf-8")
    assert saved == APPLY_ROPE or saved == APPLY_ROPE + "\n"
