"""Correct learner code the device probe now fails (new factories, `.numpy()`)."""

from __future__ import annotations

from pathlib import Path

import pytest
from grader_helpers import grade_source

pytest.importorskip("torch")

# correct on a GPU: torch.asarray of a tensor keeps the tensor's device (mask on Q's device)
SDPA_ASARRAY_MASK = """
    import math, torch
    def scaled_dot_product_attention(Q, K, V, mask=None):
        scores = Q @ K.transpose(-2, -1) / math.sqrt(Q.shape[-1])
        if mask is not None:
            allowed = torch.asarray(mask, dtype=torch.bool)  # stays where mask is
            scores = scores.masked_fill(~allowed, float("-inf"))
        weights = torch.nan_to_num(torch.softmax(scores, dim=-1), nan=0.0)
        return weights @ V, weights
"""

# correct on a GPU: the table is built on the host in NumPy from a CPU tensor, then moved by .to(x)
ROPE_NUMPY_ON_HOST = """
    import numpy as np, torch
    def apply_rope(x, offset=0, base=10000.0, interleaved=False):
        d, n = x.shape[-1], x.shape[-2]
        half = torch.arange(0, d, 2, dtype=torch.float64).numpy()  # a CPU tensor: .numpy() is fine
        inv_freq = 1.0 / (base ** (half / d))
        angles = np.outer(np.arange(offset, offset + n, dtype=np.float64), inv_freq)
        cos, sin = torch.from_numpy(np.cos(angles)).to(x), torch.from_numpy(np.sin(angles)).to(x)
        if interleaved:
            a, b = x[..., 0::2], x[..., 1::2]
            return torch.stack((a * cos - b * sin, a * sin + b * cos), -1).flatten(-2)
        a, b = x[..., : d // 2], x[..., d // 2:]
        return torch.cat((a * cos - b * sin, a * sin + b * cos), -1)
"""


def _grade(grader, tmp_path: Path, drill: str, source: str) -> dict:
    return grade_source(grader, tmp_path, drill, source)


def test_asarray_of_an_input_keeps_its_device_and_passes(warm_grader, tmp_path):
    verdict = _grade(warm_grader, tmp_path, "sdpa", SDPA_ASARRAY_MASK)
    assert verdict["status"] == "pass", verdict


def test_numpy_of_a_host_tensor_is_no_device_mistake(warm_grader, tmp_path):
    verdict = _grade(warm_grader, tmp_path, "rope", ROPE_NUMPY_ON_HOST)
    assert verdict["status"] == "pass", verdict
