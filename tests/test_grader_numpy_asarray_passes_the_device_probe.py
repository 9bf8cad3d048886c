"""sdpa code that takes its scores to NumPy with `np.asarray(scores)` passes on CPU, device check
included, although on a GPU it raises as `.numpy()` does (`Tensor.__array__` calls `.numpy()`:
"can't convert cuda:0 device type tensor to numpy"). The same file with `scores.numpy()` fails
the device check (`tests/test_grader_device_audit_and_half_dtype.py`).

The device probe (`kernels/device_probe.DeviceAudit`) flags `torch.Tensor.numpy` by name; NumPy
reaches the tensor through `Tensor.__array__` instead, and the `.numpy()` inside it runs with
the probe's function mode already handling that call, so it is never seen."""

from __future__ import annotations

from pathlib import Path

import pytest
from grader_helpers import grade_source

pytest.importorskip("torch")
pytest.importorskip("numpy")

ASARRAY_SOFTMAX = """
    import math, numpy as np, torch
    def scaled_dot_product_attention(Q, K, V, mask=None):
        scores = (Q @ K.transpose(-2, -1) / math.sqrt(Q.shape[-1])).to(torch.float64)
        if mask is not None:
            scores = scores.masked_fill(mask == 0, float("-inf"))
        s = np.asarray(scores)  # TypeError for a tensor on a GPU, as .numpy() is
        e = np.exp(s - s.max(axis=-1, keepdims=True))
        w = np.nan_to_num(e / e.sum(axis=-1, keepdims=True))
        return torch.from_numpy(w).to(Q.dtype) @ V
"""


def test_np_asarray_of_an_input_tensor_fails_the_device_check(warm_grader, tmp_path: Path):
    verdict = grade_source(warm_grader, tmp_path, "sdpa", ASARRAY_SOFTMAX, timeout=30.0)
    device = next(row for row in verdict["checks"] if row["name"] == "device")
    assert verdict["status"] != "pass", verdict["summary"]
    assert device["status"] == "fail", device
