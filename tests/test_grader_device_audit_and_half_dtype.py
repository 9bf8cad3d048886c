"""Code whose verdict was wrong on a CPU-only grade.

- The device probe (`kernels/device_probe.DeviceAudit`) misses a round trip through NumPy
  (`.numpy()` raises for a CUDA tensor), so code that cannot run on a GPU passes;
- it flags `.to(other_tensor)`, which moves to the other tensor's device, as a hard-coded
  device, so correct code fails with "an error when x is on a GPU";
- a float16/bfloat16 case that returns another dtype (or shape) is only an "extra note", so
  code that breaks the statement's "in the inputs' dtype" passes.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from grader_helpers import grade_source

pytest.importorskip("torch")

NUMPY_SOFTMAX = """
    import math, numpy as np, torch
    def scaled_dot_product_attention(Q, K, V, mask=None):
        scores = (Q @ K.transpose(-2, -1) / math.sqrt(Q.shape[-1])).to(torch.float64)
        if mask is not None:
            scores = scores.masked_fill(mask == 0, float("-inf"))
        s = scores.numpy()  # TypeError for a tensor on a GPU
        e = np.exp(s - s.max(axis=-1, keepdims=True))
        w = np.nan_to_num(e / e.sum(axis=-1, keepdims=True))
        return torch.from_numpy(w).to(Q.dtype) @ V
"""

# correct RoPE: angles in float64 on the host, cos/sin moved to x's device and dtype by `.to(x)`
ROPE_TO_X = """
    import torch
    def apply_rope(x, offset=0, base=10000.0, interleaved=False):
        d, n = x.shape[-1], x.shape[-2]
        inv_freq = 1.0 / (base ** (torch.arange(0, d, 2, dtype=torch.float64) / d))
        positions = torch.arange(offset, offset + n, dtype=torch.float64)
        angles = torch.outer(positions, inv_freq)
        cos, sin = angles.cos().to(x), angles.sin().to(x)  # Tensor.to(other): other's dtype AND device
        if interleaved:
            a, b = x[..., 0::2], x[..., 1::2]
            return torch.stack((a * cos - b * sin, a * sin + b * cos), -1).flatten(-2)
        a, b = x[..., : d // 2], x[..., d // 2:]
        return torch.cat((a * cos - b * sin, a * sin + b * cos), -1)
"""

HALF_NOT_CAST_BACK = """
    import math, torch
    def scaled_dot_product_attention(Q, K, V, mask=None):
        if Q.dtype in (torch.float16, torch.bfloat16):  # compute in float32...
            Q, K, V = Q.float(), K.float(), V.float()
        scores = Q @ K.transpose(-2, -1) / math.sqrt(Q.shape[-1])
        if mask is not None:
            scores = scores.masked_fill(mask == 0, float("-inf"))
        return torch.nan_to_num(torch.softmax(scores, -1)) @ V  # ...and return float32
"""


def _grade(grader, tmp_path: Path, drill: str, source: str) -> dict:
    return grade_source(grader, tmp_path, drill, source)


def test_a_numpy_round_trip_fails_the_device_check(warm_grader, tmp_path):
    verdict = _grade(warm_grader, tmp_path, "sdpa", NUMPY_SOFTMAX)
    assert verdict["status"] != "pass", verdict


def test_moving_to_another_tensor_with_to_is_not_a_hard_coded_device(warm_grader, tmp_path):
    verdict = _grade(warm_grader, tmp_path, "rope", ROPE_TO_X)
    assert verdict["status"] == "pass", verdict


def test_returning_float32_for_float16_inputs_is_not_a_pass(warm_grader, tmp_path):
    verdict = _grade(warm_grader, tmp_path, "sdpa", HALF_NOT_CAST_BACK)
    assert verdict["status"] != "pass", verdict
