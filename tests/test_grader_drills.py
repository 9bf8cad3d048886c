"""The real drills through the sandbox: starters fail, and every bank file gets the same verdict
as trusted in-process grading with the same seed (the sandbox changes where code runs, not what
it is judged to be)."""

from __future__ import annotations

from pathlib import Path

import pytest
from grader_helpers import grade_limits

pytest.importorskip("torch")

from studyapp.kernels_loader import load_kernels  # noqa: E402

BANK = Path(__file__).parent / "drill_bank"
COVERAGE_BANK = Path(__file__).parent / "drill_bank_coverage"
BANK_FILES = sorted(p for p in BANK.glob("*/*/*.py") if p.parent.name in ("right", "wrong")) + [
    # what the sandbox must carry over intact: the meta-device probe, non-contiguous inputs,
    # errors named by their message, float16 cases
    COVERAGE_BANK / path for path in (
        "sdpa/wrong/hard_coded_device.py", "sdpa/wrong/view_on_noncontiguous.py",
        "sdpa/wrong/fill_overflows_float16.py", "sdpa/wrong/chunk_mask_offset.py",
        "sdpa/right/query_chunks_baddbmm.py", "causal_mask/wrong/hard_coded_device.py",
        "causal_mask/wrong/fixed_size_buffer__8.py", "padding_mask/wrong/hard_coded_device.py",
        "padding_mask/wrong/position_overflow__uint8.py", "mha/wrong/hard_coded_device.py",
        "mha/wrong/heads_not_transposed.py", "mha/right/loop_over_heads.py")]
SEED = 12345


def _without_tracebacks(text: str) -> str:
    """Tracebacks differ on purpose: in-process they show grader frames, sandboxed only the learner's."""
    return "\n".join(line for line in text.splitlines()
                     if line.strip() and not line.startswith((" ", "Traceback (most recent call last)")))


@pytest.fixture
def grader(warm_grader):
    return warm_grader


@pytest.mark.parametrize("drill_id", ["sdpa", "causal_mask", "padding_mask", "mha"])
def test_every_starter_fails_in_the_sandbox(grader, drill_id):
    starter = load_kernels().DRILLS[drill_id].starter_path
    verdict = grader.grade(drill_id, starter, device="cpu")
    assert verdict["status"] in ("error", "fail")
    assert "NotImplementedError" in verdict["summary"]


@pytest.mark.parametrize("path", BANK_FILES, ids=lambda p: "/".join(p.parts[-4:]))
def test_bank_file_gets_the_in_process_verdict(grader, path):
    drill_id, kind = path.parts[-3], path.parts[-2]
    sandboxed = grader.grade(drill_id, path, device="cpu", seed=SEED)
    trusted = load_kernels().grade_in_process(drill_id, path, seed=SEED, device="cpu")
    assert sandboxed["status"] == ("pass" if kind == "right" else trusted["status"]), (sandboxed, trusted)
    assert (sandboxed["status"] == "pass") == (kind == "right"), sandboxed
    assert sandboxed["summary"] == trusted["summary"]
    assert _without_tracebacks(sandboxed["hint"]) == _without_tracebacks(trusted["hint"])
    assert [c["status"] for c in sandboxed["checks"]] == [c["status"] for c in trusted["checks"]]
    assert sandboxed["seed"] == trusted["seed"] == SEED


@pytest.mark.parametrize("source, status, words", [
    ("def scaled_dot_product_attention(Q, K, V, mask=None):\n    return None\n", "fail", "NoneType"),
    ("def scaled_dot_product_attention(Q, K, V, mask=None):\n    return Q.numpy()\n", "fail", "numpy"),
    ("def scaled_dot_product_attention(Q, K):\n    return Q\n", "error", "wrong signature"),
    ("def attention(Q, K, V, mask=None):\n    return Q\n", "error", "no function or class named"),
    ("import torch\ndef scaled_dot_product_attention(Q, K, V, mask=None):\n    while True:\n        pass\n",
     "error", "timed out"),
])
def test_the_real_judge_and_the_sandbox_name_broken_submissions(grader, tmp_path, source, status, words):
    path = tmp_path / "sdpa.py"
    path.write_text(source)
    verdict = grader.grade("sdpa", path, device="cpu", limits=grade_limits(timeout=2.0))
    assert verdict["status"] == status, verdict
    assert words in verdict["summary"] + " " + verdict["hint"], verdict


def test_a_module_with_the_wrong_constructor_gets_a_wrong_signature_verdict(grader, tmp_path):
    path = tmp_path / "mha.py"
    path.write_text("import torch\n\nclass MultiHeadAttention(torch.nn.Module):\n"
                    "    def __init__(self, d_model):\n        super().__init__()\n")
    verdict = grader.grade("mha", path, device="cpu")
    assert verdict["status"] == "error"
    assert verdict["summary"].startswith("wrong signature: MultiHeadAttention(d_model)"), verdict


def test_grade_seed_reproduces_a_verdict_from_the_cli(tmp_path):
    """Every verdict carries the seed of its fresh cases; `grade --seed N` gives the same verdict."""
    import json
    import os
    import subprocess
    import sys

    root = Path(__file__).resolve().parents[1]
    env = dict(os.environ, PYTHONPATH=str(root))
    wrong = COVERAGE_BANK / "sdpa" / "wrong" / "scale_by_sqrt_m.py"

    def grade(*extra: str) -> list[dict]:
        done = subprocess.run([sys.executable, "-m", "studyapp", "--data-dir", str(tmp_path), "grade", "sdpa",
                               str(wrong), str(wrong), "--device", "cpu", "--json", *extra],
                              capture_output=True, text=True, env=env, cwd=root, timeout=120)
        assert done.returncode == 1, done.stderr
        return json.loads(done.stdout)

    first = grade()
    seeds = [verdict["seed"] for verdict in first]
    again = grade("--seed", str(seeds[1]))
    assert [v["seed"] for v in again] == [seeds[1], seeds[1]]
    for key in ("status", "summary", "hint", "checks"):
        assert again[0][key] == first[1][key]
    bad = subprocess.run([sys.executable, "-m", "studyapp", "--data-dir", str(tmp_path), "grade", "sdpa",
                          str(wrong), "--seed", "many"], capture_output=True, text=True, env=env, cwd=root)
    assert bad.returncode == 2 and "Traceback" not in bad.stderr and "--seed" in bad.stderr
