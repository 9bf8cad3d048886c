"""The sandbox on a fake drill: every hostile submission gets a verdict in time and leaves nothing running."""

from __future__ import annotations

import os
import textwrap
import threading
import time

import pytest
from grader_helpers import (
    NOBODY_FORKS,
    SEGFAULT,
    fake_drill_client,
    grade_limits,
    processes_below,
    processes_with_argument,
    warm_up,
    worker_pid,
)

from studyapp.grader.contract import ChildExit

TIMEOUT = 2.0
SLACK = 3.0
"""Seconds a verdict may take beyond the timeout (cases, fork, judge, cleanup on a busy machine)."""

HOSTILE = {
    "syntax_error": ("def add(a, b)\n    return a + b\n", "syntax error on line 1"),
    "import_error": ("import no_such_module_for_studyapp\n", "import error: No module named"),
    "raises_on_load": ("raise RuntimeError('top level')\n", "raised RuntimeError when loaded"),
    "missing_entry": ("def plus(a, b):\n    return a + b\n", "no function or class named `add`"),
    "wrong_signature": ("def add(a):\n    return a\n", "wrong signature: add(a)"),
    "raises": ("def add(a, b):\n    raise ValueError('boom')\n", "ValueError: boom"),
    "infinite_loop": ("def add(a, b):\n    while True:\n        pass\n", "timed out after 2 s"),
    "sleeps_forever": ("import time\ndef add(a, b):\n    time.sleep(10**6)\n", "timed out"),
    "reads_stdin": ("def add(a, b):\n    return input()\n", "EOFError"),
    "memory_bomb_python": (
        "def add(a, b):\n    hog = []\n    while True:\n        hog.append(bytearray(1 << 30))\n",
        "ran out of memory"),
    "memory_bomb_torch": ("import torch\ndef add(a, b):\n    return torch.empty(1 << 40)\n", "ran out of memory"),
    "sys_exit": ("import sys\ndef add(a, b):\n    sys.exit(3)\n", "sys.exit(3)"),
    "exit_on_load": ("import sys\nsys.exit('bye')\n", "sys.exit('bye')"),
    "os_exit": ("import os\ndef add(a, b):\n    os._exit(5)\n", "exited with status 5"),
    "segfault": (SEGFAULT, "segmentation fault"),
    "ctypes": ("import ctypes\ndef add(a, b):\n    ctypes.string_at(0)\n", "ctypes.string_at: not allowed"),
    "huge_prints": ("def add(a, b):\n    while True:\n        print('x' * 1000)\n", "output limit"),
    "huge_print_once": ("def add(a, b):\n    print('y' * (50 << 20))\n    return a + b\n", "output limit"),
    "fork_bomb": ("import os\ndef add(a, b):\n    while True:\n        os.fork()\n", "tried to start a process"),
    # in a PID namespace the learner's first process survives its own SIGKILL and returns None
    "kills_its_group": ("import os, signal\ndef add(a, b):\n    os.killpg(0, signal.SIGKILL)\n",
                        ("SIGKILL", "returned NoneType")),
    "returns_none": ("def add(a, b):\n    pass\n", "returned NoneType"),
    "returns_numpy": ("def add(a, b):\n    return (a + b).numpy()\n", "returned ndarray"),
}


SMALL_MEMORY = 512
"""MiB a submission may allocate here: small, so memory bombs hit it quickly."""


@pytest.fixture
def client(warm_fake_grader):
    """The shared warm worker: the timings below exclude torch's import."""
    return warm_fake_grader


def grade_source(client, tmp_path, source: str, **kw) -> tuple[dict, float]:
    path = tmp_path / "submission.py"
    path.write_text(source)
    started = time.monotonic()
    limits = grade_limits(timeout=kw.pop("timeout", TIMEOUT), memory_mb=SMALL_MEMORY)
    verdict = client.grade("add", path, device="cpu", limits=limits, **kw)
    return verdict, time.monotonic() - started


def assert_nothing_left(client) -> None:
    deadline = time.monotonic() + 1.0
    while processes_below(client) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert processes_below(client) == set()


def test_a_correct_file_passes_and_its_prints_are_shown(client, tmp_path):
    verdict, _ = grade_source(client, tmp_path, "def add(a, b):\n    print('hi')\n    return a + b\n")
    assert verdict["status"] == "pass", verdict
    assert "hi" in verdict["output"]
    assert set(verdict) >= {"drill", "file", "status", "summary", "hint", "device", "seconds", "checks"}
    assert verdict["device"] == "cpu"


def test_a_wrong_file_fails_with_the_judges_checks(client, tmp_path):
    verdict, _ = grade_source(client, tmp_path, "def add(a, b):\n    return a - b\n")
    assert verdict["status"] == "fail"
    assert verdict["checks"] and verdict["hint"]


@NOBODY_FORKS
@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_hostile_submission_gets_a_verdict_in_time_and_leaves_nothing(client, tmp_path, name):
    source, expected = HOSTILE[name]
    verdict, seconds = grade_source(client, tmp_path, source)
    assert verdict["status"] in ("error", "fail"), verdict
    assert verdict["origin"] == "learner", verdict
    assert any(text in verdict["summary"] for text in ([expected] if isinstance(expected, str) else expected)), verdict
    assert seconds < TIMEOUT + SLACK
    assert_nothing_left(client)


def test_huge_output_is_truncated_in_the_verdict(client, tmp_path):
    verdict, _ = grade_source(client, tmp_path, "def add(a, b):\n    while True:\n        print('x' * 1000)\n")
    assert verdict["output_truncated"] is True
    assert len(verdict["output"]) < 10_000


def test_writing_the_protocol_fd_cannot_forge_a_pass(client, tmp_path):
    forged = '{"id": 1, "verdict": {"status": "pass"}}'
    source = f"import os\ndef add(a, b):\n    os.write(1, b'{forged}\\n')\n    os.write(2, b'on stderr\\n')\n    return a - b\n"
    verdict, _ = grade_source(client, tmp_path, source)
    assert verdict["status"] == "fail"
    assert forged in verdict["output"] and "on stderr" in verdict["output"]


@pytest.fixture
def forking_client():
    """A worker whose children may start processes (the guard's wall off, as if code got past
    it): what the sandbox does with them, beneath that wall."""
    grader = fake_drill_client()
    grader.env["STUDYAPP_GRADER_WITHOUT"] = "processes"
    with grader:
        yield grader


@pytest.mark.parametrize("source", [
    "import os\ndef add(a, b):\n    os.fork()\n    return a + b\n",
    "import subprocess, sys\ndef add(a, b):\n    subprocess.run([sys.executable, '-c', 'pass'])\n    return a + b\n",
    "import _posixsubprocess\ndef add(a, b):\n    _posixsubprocess.fork_exec()\n    return a + b\n",
])
def test_starting_a_process_is_refused_and_said(client, tmp_path, source):
    verdict, _ = grade_source(client, tmp_path, source)
    assert verdict["status"] == "error" and "tried to start a process" in verdict["summary"], verdict
    assert_nothing_left(client)


@NOBODY_FORKS
def test_background_processes_that_leave_the_session_are_killed(forking_client, tmp_path):
    client = forking_client
    marker = f"studyapp-test-daemon-{os.getpid()}-{time.monotonic_ns()}"
    source = textwrap.dedent(f"""
        import os, subprocess, sys, time
        SLEEP = [sys.executable, "-c", "import time; time.sleep(1000)", {marker!r}]
        def add(a, b):
            subprocess.Popen(SLEEP, start_new_session=True)
            if os.fork() == 0:          # a classic daemon: fork, setsid, fork again
                os.setsid()
                if os.fork() == 0:
                    os.execv(sys.executable, SLEEP)
                os._exit(0)
            time.sleep(0.2)             # four calls (two cases, twice each) stay within the timeout
            return a + b
    """)
    verdict, _ = grade_source(client, tmp_path, source)
    assert verdict["status"] == "pass", verdict
    assert processes_with_argument(marker) == []
    assert_nothing_left(client)


@NOBODY_FORKS
def test_forked_children_cannot_answer_for_the_submission(forking_client, tmp_path):
    client = forking_client
    source = "import os\ndef add(a, b):\n    os.fork()\n    return a + b\n"
    verdict, _ = grade_source(client, tmp_path, source)
    assert verdict["status"] == "pass", verdict
    assert_nothing_left(client)


def test_the_worker_forks_with_one_torch_thread_and_torch_still_works(client, tmp_path):
    source = textwrap.dedent("""
        import torch
        def add(a, b):
            assert torch.get_num_threads() == 1, torch.get_num_threads()
            big = torch.randn(512, 512)
            (big @ big).sum()             # a BLAS call in the forked child must not hang
            return a + b
    """)
    verdict, _ = grade_source(client, tmp_path, source)
    assert verdict["status"] == "pass", verdict


@NOBODY_FORKS
def test_the_grader_goes_on_after_hostile_files(client, tmp_path):
    for source, _ in HOSTILE.values():
        grade_source(client, tmp_path, source, timeout=1.0)
    verdict, _ = grade_source(client, tmp_path, "def add(a, b):\n    return b + a\n")
    assert verdict["status"] == "pass"


def test_cancel_stops_the_running_submission(warm_fake_grader, tmp_path):
    grader = warm_fake_grader  # a cancel stops the submission, never the worker: the shared one serves
    grader.start()
    worker = worker_pid(grader)
    path = tmp_path / "loop.py"
    path.write_text("def add(a, b):\n    while True:\n        pass\n")
    result = {}
    thread = threading.Thread(target=lambda: result.update(grader.grade("add", path, device="cpu", limits=grade_limits(timeout=30))))
    thread.start()
    deadline = time.monotonic() + 60
    while not processes_below(grader) and time.monotonic() < deadline:
        time.sleep(0.05)  # until the worker has forked the child
    assert processes_below(grader)
    grader.cancel()
    thread.join(timeout=10)
    assert not thread.is_alive()
    assert result["status"] == "error" and result["summary"] == "cancelled"
    assert_nothing_left(grader)
    assert worker_pid(grader) == worker, "cancelling a submission must not stop the worker"


def test_a_dead_worker_gives_an_error_verdict_and_is_restarted(tmp_path):
    with fake_drill_client() as grader:
        path = tmp_path / "good.py"
        path.write_text("def add(a, b):\n    return a + b\n")
        assert grader.grade("add", path, device="cpu")["status"] == "pass"
        first = worker_pid(grader)
        timer = threading.Timer(0.2, os.kill, (first, 9))
        slow = tmp_path / "slow.py"
        slow.write_text("import time\ndef add(a, b):\n    time.sleep(5)\n    return a + b\n")
        timer.start()
        verdict = grader.grade("add", slow, device="cpu")
        assert verdict["status"] == "error" and "stopped unexpectedly" in verdict["summary"]
        assert verdict["origin"] == "grader"
        assert grader.grade("add", path, device="cpu")["status"] == "pass"
        assert worker_pid(grader) != first


def test_unknown_drill_and_unreadable_file_are_errors(client, tmp_path):
    unknown = client.grade("nope", tmp_path / "x.py", device="cpu")
    assert "unknown drill" in unknown["summary"] and unknown["origin"] == "request"
    missing = client.grade("add", tmp_path / "missing.py", device="cpu")
    assert "cannot read the file" in missing["summary"] and missing["origin"] == "request"


@pytest.mark.parametrize("code", list(ChildExit))
def test_learner_code_exiting_with_the_graders_own_codes_is_still_the_learners_failure(client, tmp_path, code):
    verdict, _ = grade_source(client, tmp_path, f"import os\ndef add(a, b):\n    os._exit({int(code)})\n")
    assert verdict["status"] == "error" and verdict["origin"] == "learner", verdict
    if code == ChildExit.SETUP_FAILED:  # learner code ran, so the sandbox was up: not the grader's failure
        assert f"exited with status {int(code)}" in verdict["summary"], verdict


def test_learner_code_runs_unprivileged_and_can_still_import_the_standard_library(client, tmp_path):
    source = textwrap.dedent("""
        import os
        def add(a, b):
            import shelve, fractions, statistics   # not imported by the worker: read from disk now
            assert os.getuid() != 0 and os.geteuid() != 0
            return a + b
    """)
    verdict, _ = grade_source(client, tmp_path, source)
    assert verdict["status"] == "pass", verdict


@pytest.mark.skipif(os.geteuid() != 0, reason="only a root worker switches the child to another user")
def test_learner_code_cannot_write_the_apps_files(client, tmp_path):
    target = tmp_path / "notes.md"
    target.write_text("my notes\n")
    source = f"def add(a, b):\n    open({str(target)!r}, 'w').write('gone')\n    return a + b\n"
    verdict, _ = grade_source(client, tmp_path, source)
    assert verdict["status"] == "error" and "PermissionError" in verdict["summary"], verdict
    assert target.read_text() == "my notes\n"


def test_the_worker_outlives_the_thread_that_started_it(tmp_path):
    """The TUI grades from worker threads: the warm worker must not die when one of them ends."""
    path = tmp_path / "good.py"
    path.write_text("def add(a, b):\n    return a + b\n")
    with fake_drill_client() as grader:
        first = {}
        thread = threading.Thread(target=lambda: first.update(grader.grade("add", path, device="cpu")))
        thread.start()
        thread.join()
        pid = worker_pid(grader)
        time.sleep(0.3)
        assert first["status"] == "pass"
        assert grader.grade("add", path, device="cpu")["status"] == "pass"
        assert worker_pid(grader) == pid


def test_the_worker_exits_when_its_client_goes(tmp_path):
    grader = fake_drill_client()
    grader.start()
    proc = grader._proc
    grader._sock.close()  # what the OS does when the client process dies
    assert proc.wait(timeout=60) == 0


def test_closing_during_a_grade_cancels_it_and_stops_the_worker(tmp_path):
    path = tmp_path / "loop.py"
    path.write_text("def add(a, b):\n    while True:\n        pass\n")
    grader = fake_drill_client()
    warm_up(grader)  # else the processes seen below may be the worker's start-up probe, not the child
    result = {}
    thread = threading.Thread(target=lambda: result.update(grader.grade("add", path, device="cpu", limits=grade_limits(timeout=60))))
    thread.start()
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not (grader._proc and processes_below(grader)):
        time.sleep(0.05)
    proc = grader._proc
    started = time.monotonic()
    grader.close()
    thread.join(timeout=10)
    assert proc.poll() is not None and time.monotonic() - started < 5
    assert result["status"] == "error"


@NOBODY_FORKS
@pytest.mark.parametrize("without", ["files,network namespace", "pid namespace", "files,tcp,signals,pid namespace"])
def test_without_a_protection_grading_still_works_and_the_verdict_says_what_is_missing(tmp_path, without):
    """Kernels without Landlock or namespaces: the fallbacks still grade and clean up, and say so."""
    marker = f"studyapp-test-fallback-{os.getpid()}-{time.monotonic_ns()}"
    path = tmp_path / "daemon.py"
    path.write_text(textwrap.dedent(f"""
        import os, sys
        def add(a, b):
            if os.fork() == 0:
                os.setsid()
                os.execv(sys.executable, [sys.executable, "-c", "import time; time.sleep(1000)", {marker!r}])
            return a + b
    """))
    grader = fake_drill_client()
    grader.env["STUDYAPP_GRADER_WITHOUT"] = f"{without},processes"  # the daemon gets out
    with grader:
        verdict = grader.grade("add", path, device="cpu")
        assert verdict["status"] == "pass", verdict
        for name in without.split(","):
            assert name in verdict["sandbox"]["missing"], verdict["sandbox"]
            assert name not in verdict["sandbox"]["active"]
        assert "Sandbox:" in verdict["detail"] and "missing" in verdict["detail"]
        assert processes_with_argument(marker) == []
        assert_nothing_left(grader)


def test_with_every_protection_the_verdict_lists_them(client, tmp_path):
    verdict, _ = grade_source(client, tmp_path, "def add(a, b):\n    return a + b\n")
    from studyapp.grader.confine import probe

    expected = probe()
    assert verdict["sandbox"]["active"] == [p.value for p in expected.active]
    assert ("Sandbox:" in verdict["detail"]) == bool(expected.missing)


def test_doctor_says_which_protections_the_grader_has(monkeypatch):
    from studyapp.doctor import sandbox_report
    from studyapp.grader.confine import WITHOUT_ENV, probe

    full = sandbox_report()
    assert all(p.value in full for p in probe().active)
    monkeypatch.setenv(WITHOUT_ENV, "files")
    assert "missing: files (turned off" in sandbox_report()


@pytest.mark.skipif(os.geteuid() != 0, reason="only a root worker switches the child to nobody")
def test_without_landlock_a_root_worker_gives_nobody_no_way_to_read_private_files(tmp_path):
    """nobody keeps CAP_DAC_READ_SEARCH (to read a Python under /root) only while Landlock confines reads."""
    secret = tmp_path / "private.txt"
    secret.write_text("mine")
    secret.chmod(0o600)
    path = tmp_path / "reader.py"
    path.write_text(f"def add(a, b):\n    return a + b + len(open({str(secret)!r}).read())\n")
    grader = fake_drill_client()
    grader.env["STUDYAPP_GRADER_WITHOUT"] = "files"
    with grader:
        verdict = grader.grade("add", path, device="cpu")
    assert verdict["status"] == "error" and "PermissionError" in verdict["summary"], verdict
