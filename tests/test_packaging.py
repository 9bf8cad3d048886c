"""The built wheel carries cards/ and kernels/ inside studyapp, never a top-level `kernels`."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

pytest.importorskip("hatchling")


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--no-build-isolation",
         "--wheel-dir", str(out), str(ROOT)],
        check=True,
    )
    (built,) = out.glob("studyapp-*.whl")
    return built


def test_wheel_bundles_cards_and_kernels_inside_the_package(wheel):
    names = zipfile.ZipFile(wheel).namelist()
    assert "studyapp/_bundled/kernels/__init__.py" in names
    bundled_cards = {n for n in names if n.startswith("studyapp/_bundled/cards/")}
    source_cards = {f"studyapp/_bundled/cards/{p.relative_to(ROOT / 'cards').as_posix()}"
                    for p in (ROOT / "cards").rglob("*") if p.is_file()}
    assert source_cards <= bundled_cards
    top_level = {n.split("/", 1)[0] for n in names}
    assert "kernels" not in top_level and "cards" not in top_level


def test_wheel_ships_every_drill_folder_whole(wheel):
    """Each drill is its folder: metadata, statement, starter, reference, grading and its bank
    (the bank is what `studyapp dev-check` grades on an installed copy)."""
    names = set(zipfile.ZipFile(wheel).namelist())
    folders = sorted(path.parent for path in (ROOT / "kernels").glob("*/drill.toml"))
    assert {folder.name for folder in folders} >= {"sdpa", "causal_mask", "padding_mask", "mha"}
    for folder in folders:
        shipped = {f"studyapp/_bundled/kernels/{p.relative_to(ROOT / 'kernels').as_posix()}"
                   for p in folder.rglob("*") if p.is_file() and "__pycache__" not in p.parts}
        assert shipped and shipped <= names, sorted(shipped - names)[:5]


def test_installed_wheel_finds_its_bundled_folders(wheel, tmp_path):
    target = tmp_path / "site"
    with zipfile.ZipFile(wheel) as zf:
        zf.extractall(target)
    code = (
        "import studyapp.paths as p, sys;"
        "print(p.cards_dir()); print(p.kernels_dir())"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True,
                         env={"PYTHONPATH": str(target), "PATH": ""}, check=True).stdout.split()
    assert out == [str(target / "studyapp/_bundled/cards"), str(target / "studyapp/_bundled/kernels")]
