"""Hostile submissions (tests/hostile_bank.py) against the real grader, as this user and, when the
tests run as root, as an ordinary user too: each gets a verdict, none passes with wrong code,
nothing changes outside the scratch folder, nothing reaches the network, no process is left,
and the grader goes on grading."""

from __future__ import annotations

import json
import os
import pwd
import shutil
import subprocess
import sys
import tempfile
import textwrap
import uuid
from pathlib import Path

import pytest

pytest.importorskip("torch")

import hostile_bank
from grader_helpers import FAKE_KERNELS, NOBODY_FORKS, ROOT, grade_limits

from studyapp.grader.processes import descendants

# The bank below takes its grader through every submission (tens of seconds): its tests share
# one xdist worker, so the bank runs once per user rather than once per worker. The group also
# holds every test whose learner code forks (`NOBODY_FORKS` in grader_helpers).
pytestmark = NOBODY_FORKS

ORDINARY_USER = "studyapp-hostile"
BANK_SECONDS = 600


def _interpreter_for(user: str) -> tuple[list[str], dict[str, str]] | str:
    """A Python that `user` can run and that imports torch: ours, or the system one of the same
    version with our site-packages on its path (ours may live under /root, unreadable to others).
    Returns (command prefix, extra environment) or the reason there is none."""
    import site

    site_dirs = os.pathsep.join(site.getsitepackages())
    version = f"python{sys.version_info.major}.{sys.version_info.minor}"
    candidates = [([sys.executable], {})] + [
        ([path], {"PYTHONPATH": site_dirs})
        for path in (f"/usr/local/bin/{version}", f"/usr/bin/{version}") if os.path.exists(path)]
    probe = None
    for command, env in candidates:
        probe = subprocess.run(["runuser", "-u", user, "--", "env", *[f"{k}={v}" for k, v in env.items()],
                                *command, "-c", "import torch, landlockpy, studyapp"],
                               capture_output=True, text=True, cwd="/", env=dict(os.environ, PYTHONPATH=str(ROOT)), check=False)
        if probe.returncode == 0:
            return command, env
    last = probe.stderr.strip()[-200:] if probe else ""
    return f"no Python that {user} can run imports torch and studyapp (last: {last})"


def _ensure_user(name: str) -> str | None:
    try:
        pwd.getpwnam(name)
        return None
    except KeyError:
        pass
    if not shutil.which("useradd"):
        return "useradd is not installed"
    made = subprocess.run(["useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", name],
                          capture_output=True, text=True, check=False)
    if made.returncode not in (0, 9):  # 9: it exists (a parallel run made it)
        return f"useradd failed: {made.stderr.strip()}"
    return None


def _run_bank_as(user: str | None) -> list[dict]:
    marker = f"studyapp-hostile-{uuid.uuid4().hex[:12]}"
    root = Path(tempfile.mkdtemp(prefix="studyapp-hostile-"))
    config = {"root": str(root / "work"), "marker": marker, "kernels": str(FAKE_KERNELS), "repo": str(ROOT)}
    (root / "work").mkdir()
    (root / "config.json").write_text(json.dumps(config))
    command = [sys.executable]
    # processes allowed (the guard's wall off): the bank tests what contains code that got out
    env = dict(os.environ, PYTHONPATH=str(ROOT), STUDYAPP_GRADER_WITHOUT="processes")
    if user is not None:
        found = _interpreter_for(user)
        if isinstance(found, str):
            shutil.rmtree(root, ignore_errors=True)
            pytest.skip(found)
        command, extra = found
        env.update(extra)
        env["PYTHONPATH"] = os.pathsep.join([str(ROOT), *([extra["PYTHONPATH"]] if "PYTHONPATH" in extra else [])])
        shutil.chown(root, user, user)
        shutil.chown(root / "work", user, user)
        os.chmod(root, 0o755)
        command = ["runuser", "-u", user, "--", "env", f"PYTHONPATH={env['PYTHONPATH']}",
                   "STUDYAPP_GRADER_WITHOUT=processes",
                   f"HOME={root / 'work' / 'home'}", *command]
    runner = subprocess.Popen([*command, str(Path(__file__).parent / "hostile_bank.py"),
                               str(root / "config.json"), str(root / "results.json")],
                              env=env, cwd="/", stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        output, _ = runner.communicate(timeout=BANK_SECONDS)
    except subprocess.TimeoutExpired:
        for pid in descendants(runner.pid) | {runner.pid}:
            try:
                os.kill(pid, 9)
            except ProcessLookupError:
                pass
        runner.wait()
        pytest.fail(f"the hostile bank hung (a submission stopped its grader?) as {user or 'this user'}")
    try:
        results = json.loads((root / "results.json").read_text())
    except (OSError, ValueError):
        pytest.fail(f"the bank runner failed: {output.decode(errors='replace')[-3000:]}")
    finally:
        shutil.rmtree(root, ignore_errors=True)
        for leftover in (Path(f"/tmp/{marker}-tmp"), Path(f"/dev/shm/{marker}-shm")):
            leftover.unlink(missing_ok=True)
    return results


@pytest.fixture(scope="module", params=["this user", "ordinary user"])
def bank(request) -> dict[str, dict]:
    if request.param == "ordinary user":
        if os.geteuid() != 0:
            pytest.skip("the tests already run as an ordinary user (the 'this user' run covers it)")
        if not shutil.which("runuser"):
            pytest.skip("runuser is not installed")
        problem = _ensure_user(ORDINARY_USER)
        if problem:
            pytest.skip(problem)
        results = _run_bank_as(ORDINARY_USER)
    else:
        results = _run_bank_as(None)
    return {r["name"]: r for r in results}


NAMES = sorted(hostile_bank.BANK) + [hostile_bank.KILL_WORKER_MID_GRADE, hostile_bank.KILL_CLIENT_MID_GRADE]


def test_the_bank_has_at_least_fifteen_hostile_submissions():
    assert len(hostile_bank.BANK) >= 15


@pytest.mark.parametrize("name", NAMES)
def test_hostile_submission_is_contained(bank, name):
    seen = bank[name]
    assert not seen["problem"], seen
    assert seen["status"] in ("pass", "fail", "error"), seen
    if name in hostile_bank.MUST_NOT_PASS:
        assert seen["status"] != "pass", f"{name} forged a pass: {seen}"
    assert seen["files_changed"] == [], seen
    assert seen["network_hits"] == [], seen
    assert seen["processes_left"] == [], seen
    assert not seen["secret_leaked"], seen
    assert seen["grader_alive"], seen
    if name in hostile_bank.BANK:
        assert seen["seconds"] < hostile_bank.TIMEOUT + 8, seen


def test_forging_the_result_channel_is_named_in_the_verdict(bank):
    assert "result channel" in bank["forge_result_channel"]["summary"]
    assert "result channel" in bank["forge_channel_then_return_wrong"]["summary"]


def test_a_case_without_a_result_is_named(bank):
    assert "produced no result" in bank["clear_payloads_at_import"]["summary"]


def test_filling_the_scratch_folder_is_named(bank):
    assert "wrote too much to disk" in bank["fill_the_scratch_disk"]["summary"]


def test_the_verdict_says_which_protections_were_up(bank):
    sandbox = bank["write_tmp"]["sandbox"]
    assert set(sandbox) >= {"active", "missing"}
    assert sandbox["active"]


# -- the parent checks what crosses back, whatever the drill's own export lets through ----------

LYING_SDPA = textwrap.dedent("""
    import math, torch
    class Liar(torch.Tensor):
        claimed = torch.float32
        @property
        def dtype(self):
            return Liar.claimed
    def scaled_dot_product_attention(Q, K, V, mask=None):
        Liar.claimed = Q.dtype
        scores = Q.double() @ K.double().transpose(-2, -1) / math.sqrt(Q.shape[-1])
        if mask is not None:
            scores = scores.masked_fill(mask == 0, float("-inf"))
        return (torch.softmax(scores, dim=-1) @ V.double()).as_subclass(Liar)
""")


def test_a_tensor_subclass_lying_about_its_dtype_cannot_pass(warm_grader, tmp_path):
    path = tmp_path / "liar.py"
    path.write_text(LYING_SDPA)
    verdict = warm_grader.grade("sdpa", path, device="cpu", seed=1, limits=grade_limits(timeout=20.0))
    assert verdict["status"] != "pass", verdict
    assert "dtype" in verdict["summary"] or "Tensor subclass" in verdict["summary"], verdict


def test_an_outcome_missing_a_case_is_a_failure_not_a_pass(warm_fake_grader, tmp_path):
    """The harness itself is bypassed: the child sends a well-formed outcome for no case at all."""
    path = tmp_path / "skip_cases.py"
    path.write_text(textwrap.dedent("""
        import sys
        frame = sys._getframe()
        while frame is not None:
            if "payloads" in frame.f_locals:
                del frame.f_locals["payloads"][:]
            frame = frame.f_back
        def add(a, b):
            return a - b
    """))
    verdict = warm_fake_grader.grade("add", path, device="cpu")
    assert verdict["status"] == "fail", verdict
    assert "case 0 produced no result" in verdict["summary"], verdict


# -- the parent's checks on their own (pure logic) -------------------------------------------------

def _record(tensor, **lies) -> dict:
    record = {"type": "Tensor", "tensor": tensor, "dtype": str(tensor.dtype), "device": "cpu",
              "shape": list(tensor.shape)}
    record.update(lies)
    return record


def test_results_come_back_in_case_order_whatever_order_they_were_sent_in():
    import torch

    from studyapp.grader.results import case_results

    results = {1: {"output": _record(torch.ones(2))}, 0: {"output": _record(torch.zeros(3))}}
    ordered = case_results({"stage": "ran", "results": results}, 2)
    assert [r["output"]["shape"] for r in ordered] == [[3], [2]]


@pytest.mark.parametrize(("results", "expected"), [
    ({0: {"output": "x"}}, "case 1 produced no result"),
    ({}, "case 0 produced no result"),
    ({0: {}, 1: {}, 2: {}}, "results for cases that do not exist"),
    ([{}, {}], "did not come from the grader's harness"),
    ({0: {}, 1: "pass"}, "case 1 produced a str"),
])
def test_results_that_do_not_match_the_cases_are_rejected(results, expected):
    from studyapp.grader.results import Rejected, case_results

    rejected = case_results({"stage": "ran", "results": results}, 2)
    assert isinstance(rejected, Rejected) and expected in rejected.summary


def test_only_plain_tensors_that_are_what_they_declare_are_accepted():
    import torch

    from studyapp.grader.results import Rejected, case_results

    def judged(result):
        return case_results({"stage": "ran", "results": {0: result}}, 1)

    plain = torch.arange(6.0).reshape(2, 3)
    assert not isinstance(judged({"output": _record(plain)}), Rejected)
    cases = {
        "dtype": {"output": _record(plain.double(), dtype="torch.float32")},
        "shape": {"output": _record(plain, shape=[3, 2])},
        "subclass": {"output": _record(torch.nn.Parameter(plain))},
        "sparse": {"output": _record(plain.to_sparse())},
        "nested": {"calls": [{"inner": torch.nn.Parameter(plain)}]},
    }
    for name, result in cases.items():
        rejected = judged(result)
        assert isinstance(rejected, Rejected), name
        assert "case 0" in rejected.summary, name
