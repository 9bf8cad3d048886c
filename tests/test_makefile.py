"""`make run`'s first install shows what it is doing (it used to be silent for minutes)."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

FAKE_PYTHON = """#!/bin/sh
# Stands in for python3 and the venv's python: logs each call, makes `-m venv DIR` a venv.
echo "$0 $*" >> "$FAKE_LOG"
if [ "$1" = "-m" ] && [ "$2" = "venv" ]; then
    mkdir -p "$3/bin" && cp "$0" "$3/bin/python" && printf '#!/bin/sh\\necho app "$@"\\n' > "$3/bin/studyapp"
    chmod +x "$3/bin/studyapp"
fi
"""


@pytest.mark.skipif(shutil.which("make") is None, reason="needs make")
def test_first_install_announces_each_step_and_lets_pip_show_progress(tmp_path):
    for name in ("Makefile", "pyproject.toml"):
        shutil.copy(ROOT / name, tmp_path / name)
    fake = tmp_path / "fake-python"
    fake.write_text(FAKE_PYTHON)
    fake.chmod(fake.stat().st_mode | stat.S_IEXEC)
    log = tmp_path / "calls.log"
    env = dict(os.environ, FAKE_LOG=str(log))
    out = subprocess.run(["make", "run", f"PYTHON={fake}"], cwd=tmp_path, env=env, check=False,
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    steps = [line for line in out.stdout.splitlines() if line.startswith("==> ")]
    assert len(steps) >= 3, out.stdout  # venv, torch, the app: each announced before it starts
    assert any("torch" in s for s in steps)
    installs = [line for line in log.read_text().splitlines() if " pip install" in line]
    assert len(installs) == 2 and all("--quiet" not in c and " -q" not in c for c in installs)
    again = subprocess.run(["make", "run", f"PYTHON={fake}"], cwd=tmp_path, env=env, check=True,
                           capture_output=True, text=True, timeout=60)
    assert "==> " not in again.stdout  # installed once: later runs start at once
