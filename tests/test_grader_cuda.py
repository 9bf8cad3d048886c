"""The CUDA path: a sub-worker that owns CUDA and spawns a fresh child per submission.

The spawn mechanics are exercised on CPU too (a `--cuda` worker given CPU jobs), so they are
tested on every machine; the real CUDA tests skip without a GPU.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import pytest
from grader_helpers import FAKE_KERNELS, ROOT, SEGFAULT, fake_drill_client, grade_limits

from studyapp.grader.contract import Job
from studyapp.grader.processes import descendants
from studyapp.grader.worker import KERNELS_ENV

torch = pytest.importorskip("torch")
needs_gpu = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")


def _spawning(**extra: str):
    env = dict(os.environ, PYTHONPATH=str(ROOT), **extra)
    env[KERNELS_ENV] = str(FAKE_KERNELS)
    proc = subprocess.Popen([sys.executable, "-m", "studyapp.grader.worker", "--cuda"],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env)
    yield proc
    proc.stdin.close()
    proc.wait(timeout=10)


@pytest.fixture(scope="module")
def spawning_worker():
    yield from _spawning()


@pytest.fixture(scope="module")
def spawning_worker_allowing_processes():
    """The guard's process wall off: what contains a process that got out anyway."""
    yield from _spawning(STUDYAPP_GRADER_WITHOUT="processes")


def ask(proc, path, timeout=3.0) -> dict:
    job = Job(id=time.monotonic_ns(), drill="add", file=str(path), device="cpu", seed=None,
              limits=grade_limits(timeout=timeout).to_json())
    proc.stdin.write(json.dumps(job) + "\n")
    proc.stdin.flush()
    return json.loads(proc.stdout.readline())["verdict"]


@pytest.mark.parametrize("source, status, summary", [
    ("def add(a, b):\n    return a + b\n", "pass", "all checks pass"),
    ("def add(a, b):\n    return a * b\n", "fail", "values differ"),
    ("def add(a, b):\n    while True:\n        pass\n", "error", "timed out after 3 s"),
    (SEGFAULT, "error", "segmentation fault"),
    ("import subprocess\ndef add(a, b):\n    subprocess.Popen(['sleep', '100'], start_new_session=True)\n"
     "    return a + b\n", "error", "tried to start a process"),  # refused (`guard`), and nothing left
])
def test_spawned_children_are_sandboxed_like_forked_ones(spawning_worker, tmp_path, source, status, summary):
    path = tmp_path / "s.py"
    path.write_text(source)
    started = time.monotonic()
    verdict = ask(spawning_worker, path)
    assert verdict["status"] == status and summary in verdict["summary"], verdict
    assert time.monotonic() - started < 3.0 + 30  # the limit counts from the child's READY, after torch's import
    assert descendants(spawning_worker.pid) == set()


def test_a_spawned_childs_daemon_is_stopped_with_it(spawning_worker_allowing_processes, tmp_path):
    path = tmp_path / "s.py"
    path.write_text("import subprocess\ndef add(a, b):\n    subprocess.Popen(['sleep', '100'], start_new_session=True)\n"
                    "    return a + b\n")
    verdict = ask(spawning_worker_allowing_processes, path)
    assert verdict["status"] == "pass", verdict
    assert descendants(spawning_worker_allowing_processes.pid) == set()


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the message on machines without CUDA")
def test_asking_for_cuda_without_a_gpu_is_a_clear_error(warm_fake_grader, tmp_path):
    path = tmp_path / "s.py"
    path.write_text("def add(a, b):\n    return a + b\n")
    verdict = warm_fake_grader.grade("add", path, device="cuda")
    assert verdict["status"] == "error" and "CUDA is not available" in verdict["summary"]
    assert verdict["origin"] == "request"
    assert warm_fake_grader.grade("add", path, device="auto")["device"] == "cpu"


@needs_gpu
@pytest.mark.gpu
def test_cuda_submissions_get_cuda_tensors_and_the_cpu_worker_stays_fork_safe(tmp_path):
    path = tmp_path / "s.py"
    path.write_text("def add(a, b):\n    assert a.is_cuda and b.is_cuda\n    return a + b\n")
    with fake_drill_client() as grader:
        for device in ("cuda", "auto", "cuda"):
            verdict = grader.grade("add", path, device=device)
            assert verdict["status"] == "pass" and verdict["device"] == "cuda", verdict
        loop = tmp_path / "loop.py"
        loop.write_text("def add(a, b):\n    while True:\n        pass\n")
        assert "timed out" in grader.grade("add", loop, device="cuda", limits=grade_limits(timeout=2))["summary"]
        cpu = tmp_path / "cpu.py"
        cpu.write_text("def add(a, b):\n    assert not a.is_cuda\n    return a + b\n")
        assert grader.grade("add", cpu, device="cpu")["status"] == "pass"


@needs_gpu
@pytest.mark.gpu
def test_real_drills_pass_and_fail_on_cuda():
    from studyapp.grader.client import GraderClient

    kernels = ROOT / "kernels"
    with GraderClient(grade_limits()) as grader:
        for drill_id in ("sdpa", "mha", "causal_mask", "padding_mask"):
            for path in sorted((kernels / drill_id / "bank" / "right").glob("*.py"))[:2]:
                verdict = grader.grade(drill_id, path, device="cuda")
                assert verdict["status"] == "pass" and verdict["device"] == "cuda", verdict
        wrong = grader.grade("sdpa", kernels / "sdpa" / "bank" / "wrong" / "no_scaling.py", device="cuda")
        assert wrong["status"] == "fail"


def test_a_job_without_its_limits_is_refused_not_graded_with_defaults(spawning_worker, tmp_path):
    """Limits travel one way, in the job (from Settings): the worker has no defaults to fall back on."""
    path = tmp_path / "s.py"
    path.write_text("def add(a, b):\n    return a + b\n")
    job = {"id": time.monotonic_ns(), "drill": "add", "file": str(path), "device": "cpu", "seed": None,
           "timeout": 10}  # the old form, without "limits"
    spawning_worker.stdin.write(json.dumps(job) + "\n")
    spawning_worker.stdin.flush()
    verdict = json.loads(spawning_worker.stdout.readline())["verdict"]
    assert verdict["status"] == "error" and verdict["origin"] == "request", verdict
    assert "limits" in verdict["summary"], verdict
