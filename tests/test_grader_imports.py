"""The app's side of grading must not import torch: `import torch` alone costs seconds."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("module", ["studyapp.grader.client", "studyapp.commands.drills", "studyapp.cli"])
def test_module_does_not_import_torch(module):
    code = f"import sys, {module}; print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_listing_drills_does_not_import_torch(tmp_path):
    code = ("import sys; from studyapp.cli import main; code = main(['--data-dir', sys.argv[1], 'drills']); "
            "print(code, 'torch' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code, str(tmp_path)], cwd=ROOT, capture_output=True, text=True, check=True)
    assert out.stdout.strip().splitlines()[-1] == "0 False"


def test_loading_the_kernels_for_their_catalog_does_not_import_torch():
    """What kernels_loader promises: the CLI and the TUI load the kernels to list drills, and
    only the drills themselves (`DRILLS`, in the worker) bring torch in."""
    code = ("import sys\n"
            "from studyapp.kernels_loader import load_kernels\n"
            "kernels = load_kernels()\n"
            "from studyapp_kernels.catalog import CATALOG\n"
            "print(bool(CATALOG), 'torch' in sys.modules)\n")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "True False"
