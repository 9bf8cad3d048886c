"""A bug of ours in the app ends it with one line, as in the CLI, never Textual's traceback screen.

The real `studyapp` entry point runs in a child process with Textual's headless driver, and a
screen is broken on purpose: what the learner's terminal gets is what is checked.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from .sample_vault import write_vault

BREAK_TODAY = """
import sys
from studyapp.tui.screens import today

def broken(self):
    raise ZeroDivisionError("a bug nobody foresaw")
    yield

today.TodayScreen.compose = broken
from studyapp.cli import main
sys.exit(main(sys.argv[1:]))
"""


def run_broken_app(tmp_path: Path, **env: str) -> subprocess.CompletedProcess[str]:
    vault = write_vault(tmp_path / "vault", broken=False)
    repo = Path(__file__).resolve().parents[2]
    return subprocess.run(
        [sys.executable, "-c", BREAK_TODAY, "--vault", str(vault), "--data-dir", str(tmp_path / "data"),
         "--now", "2026-11-22T09:00:00+08:00"],
        cwd=repo, capture_output=True, text=True, timeout=120,
        env={**os.environ, "TEXTUAL_DRIVER": "textual.drivers.headless_driver:HeadlessDriver",
             "PYTHONPATH": os.pathsep.join([str(repo), os.environ.get("PYTHONPATH", "")]), **env},
    )


def test_a_bug_in_the_app_is_one_line_naming_the_crash_log(tmp_path):
    done = run_broken_app(tmp_path)
    assert done.returncode == 70, (done.returncode, done.stderr[-2000:])
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, done.stderr[-3000:]
    assert "Traceback" not in done.stderr and "locals" not in done.stderr
    assert lines[0].startswith("studyapp: error: internal error (a bug in studyapp")
    assert "ZeroDivisionError: a bug nobody foresaw" in lines[0]
    log = tmp_path / "data" / "crash.log"
    assert str(log) in lines[0]
    text = log.read_text(encoding="utf-8")
    assert "Traceback" in text and "in broken" in text and "(the app)" in text


def test_studyapp_debug_shows_the_app_traceback(tmp_path):
    done = run_broken_app(tmp_path, STUDYAPP_DEBUG="1")
    assert done.returncode != 0
    assert "ZeroDivisionError" in done.stderr and "broken" in done.stderr
    assert not (tmp_path / "data" / "crash.log").exists()
