"""The parent's wait loop, with and without pidfd (kernels before 5.3 lack it): results are read
whole, a silent child times out, and a child's heir holding the pipe does not stall the wait."""

from __future__ import annotations

import os
import time

import pytest

from studyapp.grader import sandbox
from studyapp.grader.channel import seal
from studyapp.grader.confine import Confinement, probe
from studyapp.grader.limits import Limits

MEMORY = 2 << 30
"""Address space a child may add: plenty for these children, which allocate nothing."""


@pytest.fixture(params=["pidfd", "polling"])
def wait_mode(request, monkeypatch):
    if request.param == "polling":
        monkeypatch.setattr(sandbox, "_open_pidfd", lambda pid: None)
    elif sandbox._open_pidfd(os.getpid()) is None:
        pytest.skip("no pidfd on this kernel")
    return request.param


@pytest.fixture(params=["bare", "confined"])
def confinement(request) -> Confinement:
    """No walls (the wait loop alone, as on an old kernel) or every wall this machine has."""
    return Confinement() if request.param == "bare" else probe()


def test_a_large_result_arrives_whole(wait_mode, confinement):
    payload = os.urandom(3 << 20)  # far larger than a pipe's buffer

    def child_main(fd: int, nonce: bytes) -> None:
        view = memoryview(seal(nonce, payload))
        while view:
            view = view[os.write(fd, view):]
        os._exit(0)

    run = sandbox.run_forked(child_main, Limits(timeout=5, memory_budget=MEMORY), lambda: False, confinement)
    assert run.outcome == payload and run.exit_code == 0 and not run.timed_out


def test_a_silent_child_times_out(wait_mode, confinement):
    def child_main(fd: int, nonce: bytes) -> None:
        while True:
            time.sleep(1)

    started = time.monotonic()
    run = sandbox.run_forked(child_main, Limits(timeout=0.5, memory_budget=MEMORY), lambda: False, confinement)
    assert run.timed_out and run.outcome is None
    assert time.monotonic() - started < 3


def test_an_heir_holding_the_pipe_does_not_stall_the_wait(wait_mode, confinement):
    def child_main(fd: int, nonce: bytes) -> None:
        if os.fork() == 0:  # keeps the pipe's write end open, sleeping
            time.sleep(30)
            os._exit(0)
        os.write(fd, seal(nonce, b"done"))
        os._exit(0)

    started = time.monotonic()
    run = sandbox.run_forked(child_main, Limits(timeout=10, memory_budget=MEMORY), lambda: False, confinement)
    assert run.outcome == b"done" and not run.timed_out
    assert time.monotonic() - started < 3


def test_bytes_the_harness_did_not_write_are_tampering(wait_mode, confinement):
    def child_main(fd: int, nonce: bytes) -> None:
        os.write(fd, b"forged" + seal(nonce, b"done"))
        os._exit(0)

    run = sandbox.run_forked(child_main, Limits(timeout=5, memory_budget=MEMORY), lambda: False, confinement)
    assert run.outcome is None and run.tampered is not None


@pytest.mark.parametrize("frame", [lambda nonce: seal(bytes(len(nonce)), b"done"),
                                   lambda nonce: seal(nonce, b"done") + b"more"])
def test_a_frame_with_another_seal_or_trailing_bytes_is_tampering(wait_mode, frame):
    def child_main(fd: int, nonce: bytes) -> None:
        os.write(fd, frame(nonce))
        os._exit(0)

    run = sandbox.run_forked(child_main, Limits(timeout=5, memory_budget=MEMORY), lambda: False, Confinement())
    assert run.outcome is None and run.tampered is not None
