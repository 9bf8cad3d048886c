"""sdpa code written with PyTorch's legacy tensor APIs passes on CPU, device check included, and
raises on a GPU, where each makes (or moves to) a CPU tensor that then meets the inputs:

- `mask.type(torch.FloatTensor)`, the cast older tutorials use (`torch.FloatTensor` is a CPU type);
- `torch.range(...)` (deprecated, still there), made on the default device with no `device=`;
- a legacy constructor, `torch.FloatTensor(m)`, always a CPU tensor.

On a GPU `scores.masked_fill(keep == 0, ...)` or `scores + bias` then raises ("Expected all
tensors to be on the same device"). The device probe (`kernels/device_probe.DeviceAudit`)
records a device named by `device=`, `.to(...)`, `.cpu()`, `.cuda()` and a tensor from its list
of factories (`torch.ones`, `torch.arange`...) that meets the inputs; none of these three is
recorded (checked on the audit itself: each leaves `problems` empty)."""

from __future__ import annotations

from pathlib import Path

import pytest
from grader_helpers import grade_source

pytest.importorskip("torch")

LEGACY = {
    "Tensor.type(torch.FloatTensor)": """
        import math, torch
        def scaled_dot_product_attention(Q, K, V, mask=None):
            scores = Q @ K.transpose(-2, -1) / math.sqrt(Q.shape[-1])
            if mask is not None:
                keep = mask.type(torch.FloatTensor)  # a CPU tensor, wherever mask was
                scores = scores.masked_fill(keep == 0, float("-inf"))
            return torch.nan_to_num(torch.softmax(scores, -1)) @ V
    """,
    "torch.range": """
        import math, torch
        def scaled_dot_product_attention(Q, K, V, mask=None):
            scores = Q @ K.transpose(-2, -1) / math.sqrt(Q.shape[-1])
            if mask is not None:
                scores = scores.masked_fill(mask == 0, float("-inf"))
            # a zero bias per key, made with torch.range (on the default device)
            scores = scores + 0 * torch.range(0, K.shape[-2] - 1).to(scores.dtype)
            return torch.nan_to_num(torch.softmax(scores, -1)) @ V
    """,
    "torch.FloatTensor(m)": """
        import math, torch
        def scaled_dot_product_attention(Q, K, V, mask=None):
            scores = Q @ K.transpose(-2, -1) / math.sqrt(Q.shape[-1])
            if mask is not None:
                scores = scores.masked_fill(mask == 0, float("-inf"))
            # a zero bias per key, made by the legacy constructor (always a CPU tensor)
            scores = scores + torch.FloatTensor(K.shape[-2]).zero_().to(scores.dtype)
            return torch.nan_to_num(torch.softmax(scores, -1)) @ V
    """,
}


@pytest.mark.parametrize("api", list(LEGACY))
def test_a_legacy_cpu_tensor_api_fails_the_device_check(warm_grader, tmp_path: Path, api: str):
    verdict = grade_source(warm_grader, tmp_path, "sdpa", LEGACY[api], timeout=30.0)
    device = next(row for row in verdict["checks"] if row["name"] == "device")
    assert verdict["status"] != "pass", (api, verdict["summary"])
    assert device["status"] == "fail", (api, device)
