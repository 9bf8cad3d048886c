"""`studyapp dev-check`: the dev check of the drill folders, for drill authors.

The checks themselves run on every bundled folder in test_drill_folders.py; here, that each one
catches what it is for (on broken copies of a folder) and that the command reports one line per
drill and exits non-zero on any failure.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("torch")

from studyapp.kernels_loader import load_kernels  # noqa: E402

load_kernels()
from studyapp_kernels import dev_check  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
KERNELS = ROOT / "kernels"
ONE_SEED = (0,)


def copy_of(drill_id: str, tmp_path: Path) -> Path:
    """A copy of one bundled folder, under its own name: graded with the bundled drill's spec."""
    folder = tmp_path / drill_id
    shutil.copytree(KERNELS / drill_id, folder, ignore=shutil.ignore_patterns("__pycache__"))
    return folder


def test_a_starter_that_passes_or_fails_for_another_reason_is_caught(tmp_path):
    folder = copy_of("causal_mask", tmp_path)
    assert dev_check.check_starter(folder) == []
    shutil.copyfile(folder / "reference.py", folder / "starter.py")
    assert dev_check.check_starter(folder) == ["the starter passes"]
    (folder / "starter.py").write_text("def causal_mask(n):\n    return None\n")
    assert "without saying what is left to write" in dev_check.check_starter(folder)[0]


def test_a_wrong_reference_and_a_misnamed_bank_file_are_caught(tmp_path):
    folder = copy_of("causal_mask", tmp_path)
    wrong = folder / "bank" / "wrong"
    shutil.copyfile(wrong / "inverted_mask.py", folder / "reference.py")
    assert "reference.py: fail on seed 0" in dev_check.check_passes(folder, folder / "reference.py", ONE_SEED)[0]
    shutil.copyfile(wrong / "inverted_mask.py", wrong / "strict_diagonal__mislabelled.py")
    problems = dev_check.check_diagnosed(folder, wrong / "strict_diagonal__mislabelled.py", ONE_SEED)
    assert problems and "diagnosed as inverted_mask, not strict_diagonal" in problems[0]
    shutil.copyfile(folder / "bank" / "right" / "tril_bool.py", wrong / "additive_mask__passes.py")
    assert "passes on seed 0" in dev_check.check_diagnosed(folder, wrong / "additive_mask__passes.py", ONE_SEED)[0]


def test_metadata_problems_are_named(tmp_path):
    folder = copy_of("padding_mask", tmp_path)
    (folder / "bank" / "wrong" / "off_by_one.py").unlink()
    (folder / "bank" / "wrong" / "forgot_lengths.py").write_text("def padding_mask(lengths, max_len):\n    pass\n")
    toml = folder / "drill.toml"
    text = toml.read_text(encoding="utf-8")
    start = text.index("hints = [")
    toml.write_text(text[:start] + 'hints = ["`torch.arange` then compare", "b", "c"]'
                    + text[text.index("]\n", start) + 1:], encoding="utf-8")
    problems = dev_check.check_metadata(folder)
    assert "mistakes without a wrong file: off_by_one" in problems
    assert "wrong files naming mistakes drill.toml lacks: forgot_lengths" in problems
    assert any(p.startswith("the first hint names code") for p in problems)
    (folder / "grade.py").unlink()
    assert dev_check.check_loads(folder) == ["lacks grade.py"]


def test_a_pairing_regex_that_does_not_compile_is_named(tmp_path):
    folder = copy_of("padding_mask", tmp_path)
    toml = folder / "drill.toml"
    toml.write_text(toml.read_text(encoding="utf-8") + '\n[[terms]]\nlabel = "broken"\nweight = 1.0\n'
                    'regex = "pad(ding"\nneedles = ["pad"]\n', encoding="utf-8")
    problems = dev_check.check_metadata(folder)
    assert any(p.startswith("term 'broken': its regex does not compile") for p in problems), problems


def kernels_tree(tmp_path: Path, *drills: str) -> Path:
    """A kernels/ folder with the shared modules and only the given drills (a quick dev check)."""
    root = tmp_path / "kernels"
    root.mkdir()
    for module in KERNELS.glob("*.py"):
        shutil.copyfile(module, root / module.name)
    for drill_id in drills:
        shutil.copytree(KERNELS / drill_id, root / drill_id, ignore=shutil.ignore_patterns("__pycache__"))
    return root


def dev_check_cli(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.run([sys.executable, "-m", "studyapp", "--data-dir", str(tmp_path / "data"), "dev-check",
                           *args], capture_output=True, text=True, env=env, cwd=tmp_path, timeout=300)


def test_the_command_prints_one_line_per_drill_and_fails_on_any_problem(tmp_path):
    root = kernels_tree(tmp_path, "causal_mask", "padding_mask")
    done = dev_check_cli(tmp_path, "--kernels", str(root), "--seeds", "2")
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    assert [line.split()[:2] for line in lines] == [["ok", "causal_mask"], ["ok", "padding_mask"]]
    assert "x 2 seeds" in lines[0]

    wrong = root / "causal_mask" / "bank" / "wrong"
    shutil.copyfile(wrong / "inverted_mask.py", wrong / "strict_diagonal__mislabelled.py")
    done = dev_check_cli(tmp_path, "--kernels", str(root), "--seeds", "1", "causal_mask")
    assert done.returncode == 1, done.stdout + done.stderr
    first, *problems = done.stdout.splitlines()
    assert first.split()[:2] == ["FAIL", "causal_mask"]
    assert len(problems) == 1 and "diagnosed as inverted_mask, not strict_diagonal" in problems[0]
    assert "1 of 1 drill(s) fail" in done.stderr


def test_the_command_names_an_unknown_drill_or_folder_in_one_line(tmp_path):
    root = kernels_tree(tmp_path, "causal_mask")
    done = dev_check_cli(tmp_path, "--kernels", str(root), "no_such_drill")
    assert done.returncode == 2 and done.stderr.strip() == (
        "studyapp: error: unknown drill 'no_such_drill'; choose from: causal_mask")
    done = dev_check_cli(tmp_path, "--kernels", str(tmp_path / "nowhere"))
    assert done.returncode == 2 and "is not a kernels folder" in done.stderr and "Traceback" not in done.stderr
    (root / "causal_mask" / "drill.toml").write_text('id = "causal_mask"\ntitle = \n')
    done = dev_check_cli(tmp_path, "--kernels", str(root))
    assert done.returncode == 1 and done.stdout.startswith("FAIL  drill folder causal_mask:"), done.stdout
    assert "Traceback" not in done.stderr
