"""flash_attention passes a file that is plain full-matrix attention, written in NumPy: the
whole (n, m) score matrix at once, no tiles, no online softmax, no causal block skipped.
`studyapp grade flash_attention` prints PASS ("memory cap", "causal blocks skipped" pass;
"block sizes" and "query blocks" "not exercised") on every seed tried (7, 1, 2, 3).

The drill's memory, skipping and tile checks are a `TorchDispatchMode` that sees torch's aten
ops only: the inputs go to NumPy through `np.asarray` (`Tensor.__array__`, which the device
probe does not flag as it flags `.numpy()`), the work done there creates no tensor and no
matmul the watch can count, and `torch.from_numpy(...).to(device=Q.device)` brings back a
result of the inputs' size. The statement asks for "one (block_q, block_k) tile of scores at a
time" and caps every tensor the call creates at a quarter of the score matrix."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from grader_helpers import grade_limits

pytest.importorskip("torch")
pytest.importorskip("numpy")

# textbook attention over the whole score matrix, in float64 NumPy arrays
FULL_MATRIX_IN_NUMPY = """
    import math
    import numpy as np
    import torch


    def flash_attention(Q, K, V, block_q=64, block_k=64, causal=False):
        q, k, v = (np.asarray(t.double()) for t in (Q, K, V))
        n, m, d = q.shape[-2], k.shape[-2], q.shape[-1]
        scores = q @ np.swapaxes(k, -1, -2) / math.sqrt(d)  # the whole (n, m) score matrix
        if causal:
            keep = np.tril(np.ones((n, m), dtype=bool), k=m - n)
            scores = np.where(keep, scores, -np.inf)
        top = scores.max(axis=-1, keepdims=True)
        top = np.where(np.isfinite(top), top, 0.0)
        weights = np.exp(scores - top)
        total = weights.sum(axis=-1, keepdims=True)
        with np.errstate(divide="ignore", invalid="ignore"):
            lse = np.log(total[..., 0]) + top[..., 0]
            out = np.where(total > 0, (weights / np.where(total > 0, total, 1.0)) @ v, 0.0)
        wide = torch.promote_types(Q.dtype, torch.float32)
        back = lambda a, dtype: torch.from_numpy(np.ascontiguousarray(a)).to(device=Q.device, dtype=dtype)
        return back(out, Q.dtype), back(lse, wide)
"""


@pytest.mark.parametrize("seed", [7, 3])
def test_the_full_score_matrix_in_numpy_does_not_pass_flash_attention(warm_grader, tmp_path: Path, seed: int):
    path = tmp_path / "learner.py"
    path.write_text(textwrap.dedent(FULL_MATRIX_IN_NUMPY))
    verdict = warm_grader.grade("flash_attention", path, device="cpu", seed=seed, limits=grade_limits(timeout=30.0))
    assert verdict["status"] != "pass", (verdict["summary"], [(c["name"], c["status"]) for c in verdict["checks"]])
