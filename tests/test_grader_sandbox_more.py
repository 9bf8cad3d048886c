"""The sandbox's later walls and words: what learner code may read and see, how much it may
write to disk, and verdicts that name what it really did (files, exceptions, NUL bytes)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from grader_helpers import ROOT, fake_drill_client, grade_limits, worker_pid

pytest.importorskip("torch")

TIMEOUT = 5.0
SDPA = ROOT / "kernels" / "sdpa"


def grade_source(client, tmp_path, source: str, drill: str = "add", timeout: float = TIMEOUT) -> dict:
    path = tmp_path / "submission.py"
    path.write_text(source)
    return client.grade(drill, path, device="cpu", limits=grade_limits(timeout=timeout, memory_mb=512))


def test_learner_code_cannot_read_the_drills_reference_bank_or_folder(warm_grader, tmp_path):
    """The drill's folder holds the reference and a bank of right answers: exec'ing them must not pass."""
    source = textwrap.dedent("""
        import importlib.util, os, sys
        def scaled_dot_product_attention(Q, K, V, mask=None):
            grade = next(m for n, m in sys.modules.items() if n.endswith(".sdpa.grade"))
            folder = os.path.dirname(grade.__file__)
            seen = []
            for name in ("reference.py", "statement.md", "grade.py", "bank/right", "bank/right/logsumexp.py", "."):
                path = os.path.join(folder, name)
                try:
                    os.listdir(path) if os.path.isdir(path) else open(path).read()
                    seen.append(f"{name}=read")
                except OSError as exc:
                    seen.append(f"{name}={type(exc).__name__}")
            try:
                spec = importlib.util.spec_from_file_location("ref", os.path.join(folder, "reference.py"))
                module = importlib.util.module_from_spec(spec)
                spec.loader.exec_module(module)
                return module.scaled_dot_product_attention(Q, K, V, mask)
            except OSError as exc:
                seen.append(f"import={type(exc).__name__}")
            raise RuntimeError(" ".join(seen))
    """)
    verdict = grade_source(warm_grader, tmp_path, source, drill="sdpa")
    text = json.dumps(verdict)
    assert verdict["status"] != "pass", verdict
    for name in ("reference.py", "statement.md", "grade.py", "bank/right", "bank/right/logsumexp.py", ".", "import"):
        assert f"{name}=PermissionError" in text, verdict


def test_the_drills_own_reference_still_passes_in_the_walled_in_child(warm_grader):
    verdict = warm_grader.grade("sdpa", SDPA / "reference.py", device="cpu", seed=1)
    assert verdict["status"] == "pass", verdict


def test_learner_code_sees_none_of_the_apps_environment(tmp_path, monkeypatch):
    """A token in the app's environment must not reach learner code, its verdict, or the log synced with the vault."""
    secret = "hunter2-studyapp-test-secret"
    monkeypatch.setenv("SECRET_TOKEN_TEST", secret)
    path = tmp_path / "env.py"
    path.write_text("import os\ndef add(a, b):\n    raise ValueError(repr(sorted(os.environ.items())))\n")
    with fake_drill_client() as grader:
        verdict = grader.grade("add", path, device="cpu")
        worker = worker_pid(grader)
        if os.geteuid() == 0:  # the worker is not dumpable: only root reads its first environment
            assert secret.encode() not in Path(f"/proc/{worker}/environ").read_bytes()
    text = json.dumps(verdict)
    assert "'PATH'" in text and "'HOME'" in text, verdict  # the message does list the environment
    assert secret not in text and "SECRET_TOKEN_TEST" not in text, verdict
    assert "STUDYAPP_GRADER" not in text and "PYTHONPATH" not in text, verdict


FILL_DISK = """
import os
def add(a, b):
    block = b"x" * (1 << 20)
    for n in range(400):
        with open(f"f{n}", "wb") as f:
            f.write(block)
    return a + b
"""


def test_writing_past_the_scratch_disk_limit_is_named(warm_fake_grader, tmp_path):
    verdict = grade_source(warm_fake_grader, tmp_path, FILL_DISK)
    assert verdict["status"] == "error" and verdict["origin"] == "learner", verdict
    assert "wrote too much to disk" in verdict["summary"], verdict


def test_filling_the_disk_is_named_even_when_the_code_swallows_the_error(warm_fake_grader, tmp_path):
    source = textwrap.dedent("""
        def add(a, b):
            try:
                for n in range(400):
                    with open(f"f{n}", "wb") as f:
                        f.write(b"x" * (1 << 20))
            except OSError as exc:
                print("stopped:", exc)
            return a + b
    """)
    verdict = grade_source(warm_fake_grader, tmp_path, source)
    assert "wrote too much to disk" in verdict["summary"], verdict


def test_a_few_scratch_files_are_fine(warm_fake_grader, tmp_path):
    source = FILL_DISK.replace("range(400)", "range(4)").replace("(1 << 20)", "(512 << 10)")
    verdict = grade_source(warm_fake_grader, tmp_path, source)
    assert verdict["status"] == "pass", verdict


@pytest.mark.parametrize("without", ["scratch quota", "pid namespace"])
def test_without_a_scratch_quota_the_grader_watches_the_folder_and_stops_the_code(tmp_path, without):
    """Where no size-limited scratch can be mounted, the parent measures the folder as it runs."""
    path = tmp_path / "fill.py"
    path.write_text(FILL_DISK.replace("range(400)", "range(1000)"))
    grader = fake_drill_client()
    grader.env["STUDYAPP_GRADER_WITHOUT"] = without
    with grader:
        verdict = grader.grade("add", path, device="cpu", limits=grade_limits(timeout=20.0))
    assert verdict["status"] == "error" and verdict["origin"] == "learner", verdict
    assert "wrote too much to disk" in verdict["summary"], verdict
    assert "scratch quota" in verdict["sandbox"]["missing"], verdict["sandbox"]


def test_a_file_written_past_the_size_limit_is_not_called_printing(warm_fake_grader, tmp_path):
    source = "def add(a, b):\n    with open('dump.bin', 'wb') as f:\n        f.write(bytes(2 << 20))\n    return a + b\n"
    verdict = grade_source(warm_fake_grader, tmp_path, source)
    assert verdict["status"] == "error" and verdict["origin"] == "learner", verdict
    assert "printed" not in verdict["summary"] and "output" not in verdict["summary"], verdict
    assert "wrote a file bigger than" in verdict["summary"], verdict


def test_printing_too_much_is_still_called_printing(warm_fake_grader, tmp_path):
    verdict = grade_source(warm_fake_grader, tmp_path, "def add(a, b):\n    print('y' * (3 << 20))\n")
    assert "printed more than the output limit" in verdict["summary"], verdict


def test_an_exception_whose_str_raises_is_the_learners_exception(warm_fake_grader, tmp_path):
    source = textwrap.dedent("""
        class Weird(Exception):
            def __str__(self):
                raise RuntimeError("nope")
        def add(a, b):
            raise Weird()
    """)
    verdict = grade_source(warm_fake_grader, tmp_path, source)
    assert verdict["origin"] == "learner", verdict
    assert "could not send" not in verdict["summary"], verdict
    assert "Weird" in verdict["summary"] and "str() of the exception failed" in verdict["summary"], verdict


def test_an_exception_whose_str_raises_at_load_time_is_named_too(warm_fake_grader, tmp_path):
    source = "class Weird(Exception):\n    def __str__(self):\n        return 42\nraise Weird()\n"
    verdict = grade_source(warm_fake_grader, tmp_path, source)
    assert "raised Weird when loaded" in verdict["summary"], verdict
    assert "str() of the exception failed" in verdict["summary"], verdict


def test_a_file_with_nul_bytes_is_named_as_not_python_source(warm_fake_grader, tmp_path):
    path = tmp_path / "nul.py"
    path.write_bytes(b"\0\0import torch\ndef add(a, b):\n    return a + b\n")
    verdict = warm_fake_grader.grade("add", path, device="cpu")
    assert verdict["status"] == "error" and verdict["origin"] == "learner", verdict
    assert "NUL bytes" in verdict["summary"] and "line 0" not in verdict["summary"], verdict


def studyapp(*args: str, data_dir: Path) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.run([sys.executable, "-m", "studyapp", "--data-dir", str(data_dir), *args],
                          capture_output=True, text=True, env=env, cwd=ROOT, timeout=120)


@pytest.mark.parametrize("command", ["grade", "watch"])
@pytest.mark.parametrize("value", ["inf", "1e9", "nan", "0.001", "-1", "3601"])
def test_timeout_outside_the_config_range_is_a_usage_error(tmp_path, command, value):
    done = studyapp(command, "sdpa", str(SDPA / "reference.py"), f"--timeout={value}", data_dir=tmp_path)
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr and "internal error" not in done.stderr
    assert done.stderr.strip().splitlines()[-1].endswith("--timeout: from 0.1 to 3600 seconds, got " + value)


def test_learner_code_reads_its_own_proc_entry_and_no_other(warm_fake_grader, tmp_path):
    """In its PID namespace the child is pid 1, but /proc is the host's: /proc/1 is the host's init."""
    source = textwrap.dedent("""
        def add(a, b):
            seen = []
            for path in ("/proc/self/status", "/proc/1/cmdline", "/proc/1/status"):
                try:
                    open(path).read()
                    seen.append(f"{path}=read")
                except OSError as exc:
                    seen.append(f"{path}={type(exc).__name__}")
            raise ValueError(" ".join(seen))
    """)
    verdict = grade_source(warm_fake_grader, tmp_path, source)
    assert "/proc/self/status=read" in verdict["summary"], verdict
    assert "/proc/1/cmdline=PermissionError" in verdict["summary"], verdict
    assert "/proc/1/status=PermissionError" in verdict["summary"], verdict


def test_a_spawned_child_gets_the_same_walls_as_a_forked_one(monkeypatch):
    """The CUDA path's fresh interpreter, run on CPU: fake kernels found, environment scrubbed, quota on."""
    import io

    import torch

    from studyapp.grader import sandbox
    from studyapp.grader.confine import probe
    from studyapp.grader.limits import Limits
    from studyapp.grader.worker import KERNELS_ENV

    monkeypatch.setenv(KERNELS_ENV, str(ROOT / "tests" / "fake_kernels"))
    monkeypatch.setenv("PYTHONPATH", str(ROOT))
    monkeypatch.setenv("SECRET_TOKEN_TEST", "hunter2")
    payload = {"a": torch.ones(2), "b": torch.ones(2)}
    sources = {
        "env": "import os\ndef add(a, b):\n    raise ValueError(' '.join(sorted(os.environ)))\n",
        "disk": "def add(a, b):\n    for n in range(200):\n        open(f'f{n}', 'wb').write(bytes(1 << 20))\n",
    }
    stages = {}
    for name, source in sources.items():
        job = io.BytesIO()
        torch.save({"drill": "add", "source": source, "filename": "/x.py", "payloads": [payload]}, job)
        run = sandbox.run_spawned(job.getvalue(), Limits(timeout=5.0, memory_budget=512 << 20), lambda: False, probe())
        assert run.outcome is not None, run.output.decode(errors="replace")
        stages[name] = sandbox.load_outcome(run.outcome)
    message = stages["env"]["results"][0]["error"]["message"]
    assert "PATH" in message and "SECRET_TOKEN_TEST" not in message and KERNELS_ENV not in message
    if "scratch quota" in probe().to_dict()["active"]:
        assert stages["disk"]["stage"] == "disk", stages["disk"]


def test_a_full_scratch_is_named_whatever_size_the_limits_gave_it(tmp_path):
    """The quota's tmpfs is as big as the job's `scratch_bytes`, which may exceed the default:
    filled (here its inodes, the errors swallowed), it is still named as too much disk."""
    from types import SimpleNamespace

    from studyapp.grader import sandbox
    from studyapp.grader.child import run_and_exit
    from studyapp.grader.confine import probe
    from studyapp.grader.limits import SCRATCH_BYTES, Limits

    confinement = probe()
    if "scratch quota" not in confinement.to_dict()["active"]:
        pytest.skip("no scratch quota here")
    source = textwrap.dedent("""
        def add(a, b):
            for n in range(64):
                try:
                    open(f"f{n}", "w").close()
                except OSError:
                    pass
            return a + b
    """)
    drill = SimpleNamespace(entry="add", run_case=lambda entry, payload: {"value": entry(1, 2)})
    limits = Limits(timeout=5.0, memory_budget=512 << 20, scratch_bytes=2 * SCRATCH_BYTES, scratch_files=16)
    run = sandbox.run_forked(lambda fd, nonce: run_and_exit(drill, source, "/x.py", [{}], fd, nonce, limits),
                             limits, lambda: False, confinement)
    assert run.outcome is not None, run.output.decode(errors="replace")
    assert sandbox.load_outcome(run.outcome)["stage"] == "disk"


def test_learner_code_keeps_its_temp_files_in_its_scratch_folder(tmp_path):
    """Python's temp folder in the child was the worker's, cached before the fork, and closed by
    the walls: `tempfile` in learner code, or torch.func.vjp (its cache under
    /tmp/torchinductor_nobody), raised PermissionError, graded as the learner's own error."""
    path = tmp_path / "temp.py"
    path.write_text("import os, tempfile\ndef add(a, b):\n"
                    "    with tempfile.NamedTemporaryFile() as handle:\n"
                    "        handle.write(b'x')\n"
                    "    raise ValueError(f'{tempfile.gettempdir()}|{os.getcwd()}')\n")
    with fake_drill_client() as grader:
        verdict = grader.grade("add", path, device="cpu")
    assert "PermissionError" not in json.dumps(verdict), verdict
    temp, _, scratch = verdict["summary"].rpartition("ValueError")[2].split(":", 1)[1].strip().partition("|")
    assert temp == scratch, verdict
