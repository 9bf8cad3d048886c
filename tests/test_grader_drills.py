"""The real drills through the sandbox: starters fail, and every bank file gets the same verdict
as trusted in-process grading with the same seed (the sandbox changes where code runs, not what
it is judged to be)."""

from __future__ import annotations

from pathlib import Path

import pytest
from grader_helpers import grade_limits

pytest.importorskip("torch")

from studyapp.kernels_loader import load_kernels  # noqa: E402

KERNELS = Path(__file__).resolve().parents[1] / "kernels"


def _bank(drill_id: str, kind: str, *names: str) -> list[Path]:
    return [KERNELS / drill_id / "bank" / kind / f"{name}.py" for name in names]


BANK_FILES = [
    *_bank("causal_mask", "right", "arange_compare_int", "tril_bool"),
    *_bank("causal_mask", "wrong", "additive_mask", "inverted_mask", "strict_diagonal"),
    *_bank("mha", "right", "fused_qkv_einsum", "pytorch_sdpa_heads", "reference"),
    *_bank("mha", "wrong", "mask_not_broadcast_over_heads", "merge_without_transpose", "missing_biases",
           "no_output_projection", "scale_by_d_model", "split_without_transpose"),
    *_bank("padding_mask", "right", "host_lengths_loop", "loop_float_4d"),
    *_bank("padding_mask", "wrong", "blocks_queries", "inverted_mask", "missing_query_dim", "off_by_one"),
    *_bank("sdpa", "right", "additive_mask_tuple", "einsum_tuple", "float64_cast_back", "masked_fill_inf",
           "online_softmax_chunked", "pytorch_sdpa", "torch_where_finfo_min"),
    *_bank("sdpa", "wrong", "inverted_mask", "mask_after_softmax", "mask_ignored", "mask_leak__multiply",
           "mask_leak__small_fill", "mutates_inputs", "no_scaling", "returns_weights", "scale_by_d_k",
           "scale_by_sqrt_d_v", "softmax_wrong_dim", "transposed_output", "unstable_softmax", "wrong_dtype"),
    # what the sandbox must carry over intact: the meta-device probe, non-contiguous inputs,
    # errors named by their message, float16 cases
    *_bank("sdpa", "wrong", "hard_coded_device", "view_on_noncontiguous", "fill_overflows_float16",
           "chunk_mask_offset"),
    *_bank("sdpa", "right", "query_chunks_baddbmm"),
    *_bank("causal_mask", "wrong", "hard_coded_device", "fixed_size_buffer__8"),
    *_bank("padding_mask", "wrong", "hard_coded_device", "position_overflow__uint8"),
    *_bank("mha", "wrong", "hard_coded_device", "heads_not_transposed"),
    *_bank("mha", "right", "loop_over_heads"),
]
SEED = 12345


def _without_tracebacks(text: str) -> str:
    """Tracebacks differ on purpose: in-process they show grader frames, sandboxed only the learner's."""
    return "\n".join(line for line in text.splitlines()
                     if line.strip() and not line.startswith((" ", "Traceback (most recent call last)")))


@pytest.fixture
def grader(warm_grader):
    return warm_grader


@pytest.mark.parametrize("drill_id", sorted(path.parent.name for path in KERNELS.glob("*/drill.toml")))
def test_every_starter_fails_in_the_sandbox(grader, drill_id):
    starter = load_kernels().DRILLS[drill_id].starter_path
    verdict = grader.grade(drill_id, starter, device="cpu")
    assert verdict["status"] in ("error", "fail")
    assert "NotImplementedError" in verdict["summary"]


@pytest.mark.parametrize("path", BANK_FILES, ids=lambda p: "/".join(p.parts[-5:]))
def test_bank_file_gets_the_in_process_verdict(grader, path):
    drill_id, kind = path.parts[-4], path.parts[-2]
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
    wrong = KERNELS / "sdpa" / "bank" / "wrong" / "scale_by_sqrt_m.py"

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
