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
