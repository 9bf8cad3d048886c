"""The dev check, for every drill folder under kernels/ (see kernels/README.md).

Like `rustlings dev check`: the starter fails, the reference passes on twenty seeds, every
known mistake has a realistic wrong solution in `bank/wrong` that is diagnosed as itself on
every seed, and every correct solution in `bank/right` passes on every seed. The checks live in
`kernels/dev_check.py` (`studyapp dev-check` runs the same ones); graded in-process (trusted
files only); the sandboxed path is tested in test_grader_*.
"""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("torch")

from studyapp.kernels_loader import load_kernels  # noqa: E402

kernels = load_kernels()
from studyapp_kernels import dev_check  # noqa: E402
from studyapp_kernels.catalog import drill_folders  # noqa: E402

FOLDERS = drill_folders()
WRONG = [path for folder in FOLDERS for path in dev_check.wrong_files(folder)]
RIGHT = [path for folder in FOLDERS for path in dev_check.right_files(folder)]


def _folder_of(path: Path) -> Path:
    return path.parents[2]


def _id(path: Path) -> str:
    return f"{_folder_of(path).name}/{path.parent.name}/{path.stem}"


@pytest.mark.parametrize("folder", FOLDERS, ids=lambda folder: folder.name)
def test_folder_is_complete(folder):
    assert dev_check.check_layout(folder) == []
    assert folder.name in kernels.DRILLS


@pytest.mark.parametrize("folder", FOLDERS, ids=lambda folder: folder.name)
def test_starter_fails(folder):
    assert dev_check.check_starter(folder) == []


@pytest.mark.parametrize("folder", FOLDERS, ids=lambda folder: folder.name)
def test_reference_passes_on_twenty_seeds(folder):
    assert dev_check.check_passes(folder, folder / "reference.py") == []


@pytest.mark.parametrize("path", WRONG, ids=_id)
def test_known_mistake_is_diagnosed_as_itself(path):
    assert dev_check.check_diagnosed(_folder_of(path), path) == []


@pytest.mark.parametrize("path", RIGHT, ids=_id)
def test_correct_solution_passes_on_twenty_seeds(path):
    assert dev_check.check_passes(_folder_of(path), path) == []
