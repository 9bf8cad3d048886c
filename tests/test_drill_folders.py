"""The dev check, for every drill folder under kernels/ (see kernels/README.md).

Like `rustlings dev check`: the starter fails, the reference passes on twenty seeds, every
known mistake has a realistic wrong solution in `bank/wrong` that is diagnosed as itself on
every seed, and every correct solution in `bank/right` passes on every seed. Graded in-process
(trusted files only); the sandboxed path is tested in test_grader_*.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

pytest.importorskip("torch")

from studyapp.kernels_loader import load_kernels  # noqa: E402

kernels = load_kernels()
from studyapp_kernels.catalog import drill_folders, load_folder  # noqa: E402

FOLDERS = drill_folders()
SEEDS = tuple(range(20))
WRONG = [path for folder in FOLDERS for path in sorted((folder / "bank" / "wrong").glob("*.py"))]
RIGHT = [path for folder in FOLDERS for path in sorted((folder / "bank" / "right").glob("*.py"))]


def _drill_of(path: Path) -> str:
    return path.parents[2].name


def _id(path: Path) -> str:
    return f"{_drill_of(path)}/{path.parent.name}/{path.stem}"


@pytest.mark.parametrize("folder", FOLDERS, ids=lambda folder: folder.name)
def test_folder_is_complete(folder):
    info = load_folder(folder)
    for name in ("__init__.py", "statement.md", "starter.py", "reference.py", "grade.py"):
        assert (folder / name).is_file(), f"{folder.name} lacks {name}"
    assert info.id in kernels.DRILLS and kernels.CATALOG[info.id] == info
    assert len(info.hints) >= 3, "hints go from the idea to the API to the code"
    assert info.terms, "a drill pairs with notes through its terms"
    wrong = list((folder / "bank" / "wrong").glob("*.py"))
    right = list((folder / "bank" / "right").glob("*.py"))
    assert len(wrong) >= 5 and len(right) >= 3
    named = {path.stem.split("__")[0] for path in wrong}
    assert set(info.mistakes) <= named, f"mistakes without a wrong solution: {set(info.mistakes) - named}"
    assert named <= set(info.mistakes) | {"raises"}, f"bank files naming unknown mistakes: {named - set(info.mistakes)}"


CODE = re.compile(r"`|\btorch\.|\bF\.|\.\w+\(")
"""What gives code away: a code span, a torch call, a method call."""


@pytest.mark.parametrize("folder", FOLDERS, ids=lambda folder: folder.name)
def test_hints_climb_from_the_idea_to_the_code(folder):
    """The first hint says why, in words (it never hands over the answer); the last one shows code."""
    hints = load_folder(folder).hints
    assert not CODE.search(hints[0]), f"the first hint names code: {hints[0]!r}"
    assert CODE.search(hints[-1]), f"the last hint shows no code: {hints[-1]!r}"


@pytest.mark.parametrize("folder", FOLDERS, ids=lambda folder: folder.name)
def test_starter_fails(folder):
    verdict = kernels.grade_in_process(folder.name, folder / "starter.py")
    assert verdict["status"] in ("fail", "error"), verdict["summary"]
    assert "NotImplementedError" in verdict["summary"], "the starter fails by saying what is left to write"


@pytest.mark.parametrize("folder", FOLDERS, ids=lambda folder: folder.name)
def test_reference_passes_on_twenty_seeds(folder):
    for seed, verdict in zip(SEEDS, kernels.grade_in_process_seeds(folder.name, folder / "reference.py", SEEDS)):
        assert verdict["status"] == "pass", (seed, verdict["summary"], verdict["hint"])


@pytest.mark.parametrize("path", WRONG, ids=_id)
def test_known_mistake_is_diagnosed_as_itself(path):
    expected = path.stem.split("__")[0]
    for seed, verdict in zip(SEEDS, kernels.grade_in_process_seeds(_drill_of(path), path, SEEDS)):
        assert verdict["status"] in ("fail", "error"), (seed, verdict["summary"])
        assert verdict["mistake"] == expected, (seed, verdict["summary"], verdict["hint"])
        assert verdict["hint"], seed


@pytest.mark.parametrize("path", RIGHT, ids=_id)
def test_correct_solution_passes_on_twenty_seeds(path):
    for seed, verdict in zip(SEEDS, kernels.grade_in_process_seeds(_drill_of(path), path, SEEDS)):
        assert verdict["status"] == "pass", (seed, verdict["summary"], verdict["hint"])
