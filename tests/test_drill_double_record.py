"""One graded run is one run, however many front ends graded it: two `studyapp watch` on one
drill (two terminals, or a watch beside the TUI), or `grade` run again on an unchanged file,
each grade the same save. Before, each recorded it, so one failed save was two failed runs
("Hard: passed after 2 failed runs") and the log got two attempt events. Now a grade of the
same source bytes as the drill's last recorded run, on the same device and in the same try, is
shown but not recorded again, decided under the writer lock so two processes racing on one
save record it once."""

from __future__ import annotations

import hashlib
import shutil
import subprocess
import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from test_drill_workspace_attacks import ROOT, WRONG, _env, drill_progress, studyapp, watches  # noqa: F401

from studyapp.context import build_context
from studyapp.drill_reviews import DrillReviews
from studyapp.drills import catalog, record_attempt
from studyapp.history.events import EventKind
from studyapp.history.sync import event_log
from studyapp.reviews import ReviewService

SAME_RUN = "the same code as your last run: not counted again"
T0 = datetime(2026, 5, 4, 9, 0, tzinfo=timezone.utc)


def drill_events(data: Path) -> int:
    """How many graded-run events the history log holds."""
    log = event_log(build_context(data_dir=str(data), seed=False))
    return sum(event.kind is EventKind.DRILL for event in log.read().events)


# -- as a learner meets it: real processes -------------------------------------------------


def test_two_watches_on_one_save_record_one_run(tmp_path, watches):  # noqa: F811
    """`start`, then a watch in each of two terminals; one wrong save, then the right one.
    Before: the wrong save was recorded by both watches, 2 failed runs, proposed Hard "after 2
    failed runs", and the log held two attempt events for one save."""
    data = tmp_path / "data"
    started = studyapp(data, "start", "sdpa")
    assert started.returncode == 0, started.stderr
    workspace = Path(started.stdout.strip())
    first, second = watches(data), watches(data)
    first.wait_watching(1)
    second.wait_watching(1)  # both graded the untouched starter: no run
    shutil.copy(WRONG, workspace)
    first.wait_watching(2)
    second.wait_watching(2)
    progress = drill_progress(data)
    assert progress["attempts"] == 1 and progress["passes"] == 0, (progress, first.text(), second.text())
    # the one that came second says why its verdict did not count
    assert (first.text() + second.text()).count(SAME_RUN) == 1, first.text() + second.text()
    assert drill_events(data) == 1
    assert first.stop() == 0 and second.stop() == 0


def test_grade_again_on_an_unchanged_file_is_shown_not_counted(tmp_path):
    """`grade` run twice side by side, then once more, on the same wrong file: one failed run;
    the right solution then passes "after 1 failed run". Before: 3 failed runs."""
    data = tmp_path / "data"
    started = studyapp(data, "start", "sdpa")
    assert started.returncode == 0, started.stderr
    workspace = Path(started.stdout.strip())
    shutil.copy(WRONG, workspace)
    command = [sys.executable, "-m", "studyapp", "--data-dir", str(data), "grade", "sdpa",
               str(workspace), "--device", "cpu"]
    racing = [subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               env=_env(), cwd=ROOT, stdin=subprocess.DEVNULL) for _ in range(2)]
    outputs = [proc.communicate(timeout=180)[0] for proc in racing]
    assert [proc.returncode for proc in racing] == [1, 1], outputs
    assert drill_progress(data)["attempts"] == 1, outputs
    assert sum(SAME_RUN in out for out in outputs) == 1, outputs
    again = studyapp(data, "grade", "sdpa", str(workspace), "--device", "cpu")
    assert again.returncode == 1 and SAME_RUN in again.stdout, again.stdout
    assert drill_progress(data)["attempts"] == 1
    shutil.copy(WRONG.parent.parent / "right" / "masked_fill_inf.py", workspace)
    passed = studyapp(data, "grade", "sdpa", str(workspace), "--device", "cpu")
    assert passed.returncode == 0 and SAME_RUN not in passed.stdout, passed.stdout
    assert "passed after 1 failed run)" in passed.stdout, passed.stdout
    progress = drill_progress(data)
    assert progress["attempts"] == 2 and progress["passes"] == 1, progress


# -- the rule, in the recording function both front ends call ------------------------------


@pytest.fixture
def service(tmp_path):
    vault = tmp_path / "vault"
    vault.mkdir()
    ctx = build_context(vault=str(vault), data_dir=str(tmp_path / "data"), now=T0, seed=False)
    with ReviewService(ctx) as s:
        yield s


def graded(source: bytes, device: str = "cpu", status: str = "fail") -> dict:
    """A verdict as the grader's worker sends it: with the hash of the bytes it graded."""
    return {"drill": "sdpa", "file": "sdpa.py", "status": status, "origin": None if status == "pass" else "learner",
            "summary": "", "seconds": 0.1, "device": device,
            "source_sha256": hashlib.sha256(source).hexdigest()}


def attempts(service) -> int:
    return len(service.store.drill_attempts("sdpa"))


def test_the_same_bytes_again_are_not_recorded_again(service):
    assert record_attempt(service, graded(b"v1"), notes=[]) == []
    assert record_attempt(service, graded(b"v1"), notes=[]) is None  # the same run
    assert attempts(service) == 1


def test_changed_bytes_are_a_new_run(service):
    record_attempt(service, graded(b"v1"), notes=[])
    assert record_attempt(service, graded(b"v2"), notes=[]) is not None
    assert record_attempt(service, graded(b"v1"), notes=[]) is not None  # back to v1: not the last run
    assert attempts(service) == 3


def test_the_same_bytes_on_another_device_are_a_new_run(service):
    record_attempt(service, graded(b"v1", device="cpu"), notes=[])
    assert record_attempt(service, graded(b"v1", device="cuda"), notes=[]) is not None
    assert attempts(service) == 2


def test_a_verdict_or_an_attempt_without_a_hash_never_matches(service):
    """Attempts recorded before hashes (and verdicts of a grader that sends none) count as before."""
    unhashed = {key: value for key, value in graded(b"v1").items() if key != "source_sha256"}
    record_attempt(service, unhashed, notes=[])
    assert record_attempt(service, graded(b"v1"), notes=[]) is not None
    assert record_attempt(service, unhashed, notes=[]) is not None
    assert attempts(service) == 3


def test_the_same_code_in_a_new_try_is_that_trys_run(service):
    """A drill back due starts a try from a fresh starter; the learner writing the very bytes of
    their last run from memory makes a run of the new try, not a repeat of the old one."""
    record_attempt(service, graded(b"v1", status="pass"), notes=[])
    service.ctx.frozen_now = T0 + timedelta(days=3)
    DrillReviews(service, catalog()).begin("sdpa")  # the drill is new: a try starts
    service.ctx.frozen_now = T0 + timedelta(days=3, minutes=5)
    assert record_attempt(service, graded(b"v1", status="pass"), notes=[]) is not None
    assert attempts(service) == 2


def test_the_run_key_survives_a_replay_of_the_log(service):
    """The database is a cache of the log: rebuilt from it (another device's events), the last
    run's hash follows its attempt by event id, so a second watcher still records nothing."""
    record_attempt(service, graded(b"v1"), notes=[])
    service.sync(force=True)
    assert record_attempt(service, graded(b"v1"), notes=[]) is None
    assert attempts(service) == 1
