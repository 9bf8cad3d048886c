"""The program's exit skips Python's last full garbage collection: on a warm `due` of 10,000
notes that walk over every object the command made was a tenth of the command's time. The
program sets its objects aside (`gc.freeze`) once its command is done; `main`, which tests and
other callers run in a longer process, does not."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import tomllib

REPO = Path(__file__).resolve().parents[1]
PROBE = """\
import gc, sys
sys.argv = ["studyapp", "due", "--json", "--vault", sys.argv[1], "--data-dir", sys.argv[2]]
from studyapp.cli import main, run
frozen_by_main = (main(sys.argv[1:]), gc.get_freeze_count())
code = run()
print(frozen_by_main[0], frozen_by_main[1], code, gc.get_freeze_count())
"""


def test_the_program_sets_its_objects_aside_for_exit_and_main_does_not(tmp_path):
    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / "n.md").write_text("---\nreview_count: 0\n---\n# N\n\nbody\n")
    out = subprocess.run([sys.executable, "-c", PROBE, str(vault), str(tmp_path / "data")],
                         capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    main_code, frozen_after_main, run_code, frozen_after_run = map(int, out.stdout.splitlines()[-1].split())
    assert (main_code, run_code) == (0, 0)
    assert frozen_after_main == 0, "main froze the objects of a longer-lived caller"
    assert frozen_after_run > 1000, "the program's objects are walked again at exit"


def test_both_ways_of_starting_the_program_go_through_run():
    scripts = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["scripts"]
    assert scripts["studyapp"] == "studyapp.cli:run"
    assert "SystemExit(run())" in (REPO / "studyapp" / "__main__.py").read_text()


def test_python_m_studyapp_exits_with_the_commands_code(tmp_path):
    out = subprocess.run([sys.executable, "-m", "studyapp", "due", "--vault", str(tmp_path / "none"),
                          "--data-dir", str(tmp_path / "data")], capture_output=True, text=True,
                         timeout=60, cwd=REPO)
    assert out.returncode == 2, out.stderr  # a vault that does not exist: a usage error
    assert "does not exist" in out.stderr
