"""kv_cache_mha properties the dev check does not prove: the cache is graded on its own (not
only through the outputs), the public cases walk every kind of step past 256 tokens, and the
step-by-step results cross the sandbox unchanged."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("torch")

import torch  # noqa: E402

from studyapp.kernels_loader import load_kernels  # noqa: E402

kernels = load_kernels()
DRILL = kernels.DRILLS["kv_cache_mha"]
FOLDER = Path(DRILL.info.folder)

SWAPPED_CACHE = '''
import math
import torch
from torch import nn


class CachedSelfAttention(nn.Module):
    """Right outputs, but the cache tuple is stored as (V, K) and read back the same way."""

    def __init__(self, d_model, num_heads):
        super().__init__()
        self.h = num_heads
        self.W_q, self.W_k = nn.Linear(d_model, d_model), nn.Linear(d_model, d_model)
        self.W_v, self.W_o = nn.Linear(d_model, d_model), nn.Linear(d_model, d_model)

    def forward(self, x, cache=None):
        B, T, D = x.shape
        heads = lambda y: y.reshape(B, T, self.h, D // self.h).transpose(1, 2)
        q, k, v = heads(self.W_q(x)), heads(self.W_k(x)), heads(self.W_v(x))
        if cache is not None:
            past_v, past_k = cache
            k, v = torch.cat([past_k, k], 2), torch.cat([past_v, v], 2)
        L = k.shape[2]
        mask = torch.ones(T, L, dtype=torch.bool, device=x.device).tril(L - T)
        scores = (q @ k.transpose(-2, -1) / math.sqrt(D // self.h)).masked_fill(~mask, float("-inf"))
        out = (scores.softmax(-1) @ v).transpose(1, 2).reshape(B, T, D)
        return self.W_o(out), (v, k)
'''


def _checks(verdict) -> dict[str, str]:
    return {row["name"]: row["status"] for row in verdict["checks"]}


def test_the_cache_is_graded_on_its_own(tmp_path):
    path = tmp_path / "swapped.py"
    path.write_text(SWAPPED_CACHE)
    verdict = kernels.grade_in_process("kv_cache_mha", path, seed=3)
    checks = _checks(verdict)
    assert verdict["status"] == "fail"
    assert checks["values float32"] == checks["values float64"] == "pass"
    assert checks["cache values"] == "fail"
    assert "cache K" in verdict["hint"] and "after step 1" in verdict["hint"]


def test_public_cases_walk_prefill_decode_and_chunks_past_256():
    cases = [case for case in DRILL.public_cases("cpu") if "probe" not in case.payload]
    kinds = set()
    for case in cases:
        steps = [step["x"] for step in case.payload["steps"]]
        past = 0
        for x in steps:
            kinds.add("prefill" if past == 0 else "decode" if x.shape[1] == 1 else "chunk")
            if not x.is_contiguous():
                kinds.add("non-contiguous")
            past += x.shape[1]
        if past > 256:
            kinds.add("past 256")
        kinds.add((case.tier, steps[0].dtype))
    assert {"prefill", "decode", "chunk", "non-contiguous", "past 256"} <= kinds
    assert {("core", torch.float32), ("core", torch.float64), ("extra", torch.float16),
            ("extra", torch.bfloat16)} <= kinds


@pytest.fixture(scope="module")
def grader(warm_grader):
    """The test session's warm worker on the real drills (tests/conftest.py)."""
    return warm_grader


@pytest.mark.parametrize("name", ["reference.py", "bank/wrong/cache_not_grown__new_only.py",
                                  "bank/wrong/state_on_module.py", "bank/wrong/cache_wrong_dim.py",
                                  "bank/wrong/hard_coded_device.py"])
def test_sandboxed_verdict_is_the_in_process_one(grader, name):
    path = FOLDER / name
    sandboxed = grader.grade("kv_cache_mha", path, device="cpu", seed=7)
    trusted = kernels.grade_in_process("kv_cache_mha", path, seed=7)
    assert sandboxed["status"] == trusted["status"]  # the mistake's words are in the summary
    assert sandboxed["summary"] == trusted["summary"]
    assert _checks(sandboxed) == _checks(trusted)
