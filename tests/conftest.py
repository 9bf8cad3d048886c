"""Shared fixtures: every test gets its own data dir and never touches the user's real one, and
tests that grade without needing a fresh grader share one warm worker per test process."""

from __future__ import annotations

import os
import time

import pytest


def pytest_configure(config) -> None:
    """One timezone for the whole run (and the processes it starts): many tests fix an instant
    such as 09:00 or 12:00 UTC and expect it on that calendar day, which far enough from UTC is
    another local day (checked: the failures under UTC-12 and UTC+14 were those days, not the
    app's). STUDYAPP_TEST_TZ runs the suite in another zone; the tests of
    local days set their own."""
    os.environ["TZ"] = os.environ.get("STUDYAPP_TEST_TZ", "UTC")
    time.tzset()


@pytest.hookimpl(tryfirst=True)
def pytest_xdist_auto_num_workers(config) -> int | None:
    """`-n auto` starts one worker more than there are cores: a good share of the suite waits
    (for a grader's child to time out, a process to start, a terminal to draw) rather than
    computes. On 2 cores the whole suite took 200 s with 3 workers, 225-234 s with 2 and
    213 s with 4 (measured on this project's CI machine kind). PYTEST_XDIST_AUTO_NUM_WORKERS
    still decides when set."""
    if os.environ.get("PYTEST_XDIST_AUTO_NUM_WORKERS") or not hasattr(os, "sched_getaffinity"):
        return None  # xdist's own rule
    return len(os.sched_getaffinity(0)) + 1


@pytest.fixture(autouse=True)
def _isolated_data_dir(tmp_path_factory, monkeypatch):
    data = tmp_path_factory.mktemp("data")
    monkeypatch.setenv("STUDYAPP_DATA_DIR", str(data))
    monkeypatch.delenv("STUDYAPP_VAULT", raising=False)
    return data


def pytest_collection_modifyitems(config, items):
    """Tests marked `serial` (a real terminal, a GPU) all run in one xdist worker, one at a time."""
    for item in items:
        if item.get_closest_marker("serial") or item.get_closest_marker("gpu"):
            item.add_marker(pytest.mark.xdist_group("serial"))


@pytest.fixture(scope="session")
def warm_fake_grader():
    """A grader worker on the fake "add" drill (tests/fake_kernels), already past torch's import,
    shared by every test of this process that needs no fresh one: each start imports torch
    (seconds of CPU). A test that kills, closes or reconfigures its worker makes its own."""
    from grader_helpers import fake_drill_client, warm_up

    with fake_drill_client() as grader:
        warm_up(grader)
        yield grader


@pytest.fixture(scope="session")
def warm_grader():
    """A grader worker on the real drills in kernels/, shared like `warm_fake_grader`."""
    from grader_helpers import grade_limits

    from studyapp.grader.client import GraderClient

    with GraderClient(grade_limits()) as grader:
        grader.start()
        yield grader


@pytest.fixture
def zone(monkeypatch):
    """`zone("America/New_York")`: the local zone for the rest of the test (and back after)."""
    before = os.environ.get("TZ")

    def use(name: str) -> None:
        monkeypatch.setenv("TZ", name)
        time.tzset()

    yield use
    if before is None:
        os.environ.pop("TZ", None)
    else:
        os.environ["TZ"] = before
    time.tzset()
