"""sdpa code that casts its mask the way older tutorials do, `mask.type(torch.FloatTensor)`,
passes on CPU, device check included; on a GPU `torch.FloatTensor` is a CPU type, so the cast
moves the mask to the host and `scores.masked_fill(keep == 0, ...)` raises ("Expected all
tensors to be on the same device").

The device probe (`kernels/device_probe.DeviceAudit`) records a device named by `device=`,
`.to(...)`, `.cpu()` or `.cuda()`; `Tensor.type` with a CPU tensor type (`torch.FloatTensor`,
`"torch.DoubleTensor"`) names one too, and goes unrecorded."""

from __future__ import annotations

from pathlib import Path

import pytest
from grader_helpers import grade_source

pytest.importorskip("torch")

MASK_CAST_TO_A_CPU_TYPE = """
    import math, torch
    def scaled_dot_product_attention(Q, K, V, mask=None):
        scores = Q @ K.transpose(-2, -1) / math.sqrt(Q.shape[-1])
        if mask is not None:
            keep = mask.type(torch.FloatTensor)  # a CPU tensor, wherever mask was
            scores = scores.masked_fill(keep == 0, float("-inf"))
        return torch.nan_to_num(torch.softmax(scores, -1)) @ V
"""


def test_a_cast_to_a_cpu_tensor_type_fails_the_device_check(warm_grader, tmp_path: Path):
    verdict = grade_source(warm_grader, tmp_path, "sdpa", MASK_CAST_TO_A_CPU_TYPE, timeout=30.0)
    device = next(row for row in verdict["checks"] if row["name"] == "device")
    assert verdict["status"] != "pass", verdict["summary"]
    assert device["status"] == "fail", device
