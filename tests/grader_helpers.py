"""Helpers for the grader's tests: a client on the fake "add" drill and process inspection."""

from __future__ import annotations

import os
import shutil
import tempfile
from dataclasses import replace
from pathlib import Path

import pytest

from studyapp.config import Settings
from studyapp.grader.client import GraderClient
from studyapp.grader.contract import GradeLimits
from studyapp.grader.processes import descendants
from studyapp.grader.worker import KERNELS_ENV

FAKE_KERNELS = Path(__file__).parent / "fake_kernels"
ROOT = Path(__file__).resolve().parents[1]
NOBODY_FORKS = pytest.mark.xdist_group("hostile_bank")
"""For a test whose learner code forks, or fork-bombs: one xdist worker runs them one at a time.
A root worker runs every learner as `nobody`, whose process limit counts all of nobody's tasks,
so a fork bomb graded on another test worker used up the forks of a test beside it ("a fork
bomb?" for code that forks once)."""

SEGFAULT = ("import sys\nsys.setrecursionlimit(10 ** 7)\n"
            "def add(a, b):\n    return add.__call__(a, b)\n")
"""Learner code that crashes with SIGSEGV without ctypes (which the guard refuses): every
`__call__` nests a C call, so the C stack overflows long before the recursion limit."""


def grade_limits(**changes) -> GradeLimits:
    """The limits a default config.toml sets, with `changes` (timeout=, memory_mb=)."""
    return replace(GradeLimits.from_settings(Settings()), **changes)


def grade_source(grader, folder: Path, drill: str, source: str, timeout: float = 60.0) -> dict:
    """Grade `source` (dedented) as a learner's file for `drill` on CPU with seed 7."""
    import textwrap

    path = folder / "learner.py"
    path.write_text(textwrap.dedent(source))
    return grader.grade(drill, path, device="cpu", seed=7, limits=grade_limits(timeout=timeout))


def fake_drill_client(limits: GradeLimits | None = None) -> GraderClient:
    env = dict(os.environ)
    env[KERNELS_ENV] = str(FAKE_KERNELS)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH")) if p)
    return GraderClient(limits or grade_limits(), env=env)


def warm_up(client: GraderClient) -> None:
    """Grade a correct file once, so the worker has imported torch before a test times anything."""
    folder = Path(tempfile.mkdtemp(prefix="studyapp-warm-up-"))
    try:
        (folder / "warm_up.py").write_text("def add(a, b):\n    return a + b\n")
        verdict = client.grade("add", folder / "warm_up.py", device="cpu")
        assert verdict["status"] == "pass", verdict
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def worker_pid(client: GraderClient) -> int:
    assert client._proc is not None
    return client._proc.pid


def processes_below(client: GraderClient) -> set[int]:
    """Every live process under the worker (none should remain after a verdict)."""
    alive = set()
    for pid in descendants(worker_pid(client)):
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if state != "Z":
            alive.add(pid)
    return alive


def is_alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def processes_with_argument(argument: str) -> list[int]:
    """Live processes with `argument` on their command line, wherever they are in the tree now."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            cmdline = Path(f"/proc/{entry}/cmdline").read_bytes()
        except OSError:
            continue
        if argument.encode() in cmdline.split(b"\0") and is_alive(int(entry)):
            found.append(int(entry))
    return found


class Lent:
    """A shared warm client lent to an app: grades go to it, but the app closing at the end of
    the test leaves the shared worker running for the next test."""

    def __init__(self, client: GraderClient):
        self.client = client

    def grade(self, *args, **kwargs):
        return self.client.grade(*args, **kwargs)

    def start(self) -> None:
        self.client.start()

    def cancel(self) -> None:
        self.client.cancel()

    def close(self) -> None:
        if self.client._lock.locked():  # a grade still running is cancelled, as closing would
            self.client.cancel()
