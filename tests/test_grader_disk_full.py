"""A full disk is the machine's problem, not the learner's.

The worker's TMPDIR (where every scratch folder and the captured output go) is a tiny tmpfs,
filled before the grade: learner code that writes a few bytes, or prints a line, meets ENOSPC,
and a grader that cannot even make a scratch folder meets it before any learner code. Neither
may be called "wrote too much to disk": the verdict names the full folder and says it is this
machine's. (A learner that really fills its scratch folder is still named: see
test_grader_sandbox_more.py and the hostile bank.) Mounting needs root: skipped elsewhere.
"""

from __future__ import annotations

import errno
import subprocess
import tempfile
import textwrap
from pathlib import Path

import pytest
from grader_helpers import fake_drill_client, grade_limits, warm_up

pytest.importorskip("torch")

from studyapp.grader.confine import WITHOUT_ENV  # noqa: E402

SMALL_WRITES = textwrap.dedent("""
    def add(a, b):
        print("a line of output", flush=True)
        with open("notes.txt", "w") as notes:
            notes.write("a few bytes\\n")
        return a + b
""")


def _mount_tmpfs(options: str) -> Path:
    folder = Path(tempfile.mkdtemp(prefix="studyapp-full-disk-"))
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", f"{options},mode=1777", "studyapp-full", str(folder)],
                             capture_output=True, text=True, check=False)
    if mounted.returncode != 0:
        folder.rmdir()
        pytest.skip(f"cannot mount a tmpfs here ({mounted.stderr.strip() or mounted.returncode})")
    return folder


def _unmount(folder: Path) -> None:
    subprocess.run(["umount", "-l", str(folder)], capture_output=True, check=False)
    folder.rmdir()


def _fill_bytes(folder: Path) -> None:
    with open(folder / "filler", "wb") as filler:
        try:
            while True:
                filler.write(bytes(64 << 10))
                filler.flush()
        except OSError as exc:
            assert exc.errno == errno.ENOSPC


def _fill_inodes(folder: Path) -> None:
    for n in range(64):
        try:
            (folder / f"inode{n}").touch()
        except OSError as exc:
            assert exc.errno == errno.ENOSPC
            return
    raise AssertionError("the tmpfs never ran out of inodes")


@pytest.fixture
def tiny_tmpdir():
    """A 1 MiB tmpfs with 64 inodes, for the worker's TMPDIR: filled by the test once the worker
    is warm (a TMPDIR full before Python first looks at it is skipped for /tmp)."""
    folder = _mount_tmpfs("size=1m,nr_inodes=64")
    try:
        yield folder
    finally:
        _unmount(folder)


def _grade_on_a_full_disk(tmpdir: Path, tmp_path: Path, source: str, fill, without: str = "") -> dict:
    """Start a worker whose TMPDIR is `tmpdir`, grade once while it has room, `fill` it, grade `source`."""
    path = tmp_path / "submission.py"
    path.write_text(source)
    grader = fake_drill_client()
    grader.env["TMPDIR"] = str(tmpdir)
    if without:
        grader.env[WITHOUT_ENV] = without
    with grader:
        warm_up(grader)
        fill(tmpdir)
        return grader.grade("add", path, device="cpu", limits=grade_limits(timeout=10.0, memory_mb=512))


@pytest.mark.parametrize("without", ["", "scratch quota"], ids=["every wall", "no scratch quota"])
def test_a_few_bytes_on_a_full_disk_are_the_machines_problem(tiny_tmpdir, tmp_path, without):
    verdict = _grade_on_a_full_disk(tiny_tmpdir, tmp_path, SMALL_WRITES, _fill_bytes, without)
    assert "wrote too much" not in verdict["summary"], verdict
    assert verdict["status"] == "error" and verdict["origin"] == "grader", verdict
    assert f"no space left in {tiny_tmpdir}" in verdict["summary"], verdict
    assert "not your code" in verdict["summary"] + verdict["detail"], verdict


def test_no_room_for_a_scratch_folder_is_named_before_any_learner_code(tiny_tmpdir, tmp_path):
    verdict = _grade_on_a_full_disk(tiny_tmpdir, tmp_path, "def add(a, b):\n    return a + b\n", _fill_inodes)
    assert verdict["status"] == "error" and verdict["origin"] == "grader", verdict
    assert f"no space left in {tiny_tmpdir}" in verdict["summary"], verdict
    assert "internal grader error" not in verdict["summary"] and "Traceback" not in verdict["detail"], verdict
