"""The real app in a real terminal: tmux runs `studyapp`, we type like a learner and read the screen."""

from __future__ import annotations

import os
import shutil
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

SESSION = f"studyapp-test-{os.getpid()}"
NOTE = "注意力/缩放因子.md"


def tmux(*args: str) -> str:
    return subprocess.run(["tmux", *args], check=True, capture_output=True, text=True).stdout


def wait_for(text: str, timeout: float = 30.0) -> str:
    """Poll the pane until `text` shows (the app paints asynchronously); fail with the last screen."""
    deadline = time.monotonic() + timeout
    screen = ""
    while time.monotonic() < deadline:
        screen = tmux("capture-pane", "-p", "-t", SESSION)
        if text in screen:
            return screen
        time.sleep(0.2)
    raise AssertionError(f"{text!r} never appeared; the screen was:\n{screen}")


def test_review_one_note_with_space_then_3_in_tmux(tmp_path):
    vault = write_vault(tmp_path / "vault", broken=False)
    before = (vault / NOTE).read_text(encoding="utf-8")
    repo = Path(__file__).resolve().parents[2]
    command = " ".join([
        f"cd {repo} &&",
        f"PYTHONPATH={repo}{os.pathsep}{os.environ.get('PYTHONPATH', '')}",
        f"{sys.executable} -m studyapp --vault {vault} --data-dir {tmp_path / 'data'}",
        "--now 2026-11-22T09:00:00+08:00",
    ])
    tmux("new-session", "-d", "-s", SESSION, "-x", "100", "-y", "30", command)
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
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline:
            if SESSION not in subprocess.run(["tmux", "ls"], capture_output=True, text=True).stdout:
                break
            time.sleep(0.2)
        else:
            raise AssertionError("the app did not quit on ctrl+q")
    finally:
        subprocess.run(["tmux", "kill-session", "-t", SESSION], capture_output=True)
    after = (vault / NOTE).read_text(encoding="utf-8")
    assert after != before
    assert "last_reviewed: '2026-11-22'" in after
    assert "review_count: 4" in after
