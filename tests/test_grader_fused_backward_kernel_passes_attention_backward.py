"""attention_backward ("Attention backward by hand", `fused_allowed = false`) passes a file that
writes no gradient at all: it hands Q, K, V and dO to PyTorch's own fused flash-attention
kernels, `torch.ops.aten._scaled_dot_product_flash_attention_for_cpu` and its `_backward`, and
returns their dQ, dK, dV. No autograd is reached, nothing is hidden, no frame is walked:
`studyapp grade attention_backward` prints PASS on every seed tried (7, 1 to 5).

The drill's only watch is `AutogradWatch` (autograd entry points by name, plus `HiddenCalls`);
unlike flash_attention's `Watch` it records no fused attention call, so the drill's
`fused_allowed = false` is never enforced (README: a fused call is "watched where [the drill]
does not" allow it)."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from grader_helpers import grade_limits

pytest.importorskip("torch")

# the gradients from PyTorch's fused CPU flash-attention backward: Q, K, V, dO padded to one head
# size (the kernel wants d == d_v), in float64, the mask as a -inf bias; NaN of fully masked rows
# set to 0
FUSED_BACKWARD = """
    import torch
    import torch.nn.functional as F

    _fwd = torch.ops.aten._scaled_dot_product_flash_attention_for_cpu
    _bwd = torch.ops.aten._scaled_dot_product_flash_attention_for_cpu_backward


    def attention_backward(Q, K, V, dO, mask=None, scale=None):
        lead = Q.shape[:-2]
        n, d, m, dv = Q.shape[-2], Q.shape[-1], K.shape[-2], V.shape[-1]
        if scale is None:
            scale = d ** -0.5
        e = max(d, dv)
        four = lambda t, rows: F.pad(t.to(torch.float64).reshape(-1, 1, rows, t.shape[-1]), (0, e - t.shape[-1])).contiguous()
        q, k, v, do = four(Q, n), four(K, m), four(V, m), four(dO, n)
        bias = None
        if mask is not None:
            allowed = mask.expand(*lead, n, m).reshape(-1, 1, n, m)
            bias = torch.zeros(allowed.shape, dtype=torch.float64, device=Q.device).masked_fill(~allowed, float("-inf"))
        out, lse = _fwd(q, k, v, attn_mask=bias, scale=scale)
        dq, dk, dv_ = _bwd(do, q, k, v, out, lse, 0.0, False, attn_mask=bias, scale=scale)
        dq, dk, dv_ = (torch.nan_to_num(t, nan=0.0) for t in (dq, dk, dv_))
        return (dq[..., :d].reshape(*lead, n, d).to(Q.dtype), dk[..., :d].reshape(*lead, m, d).to(Q.dtype),
                dv_[..., :dv].reshape(*lead, m, dv).to(Q.dtype))
"""


@pytest.mark.parametrize("seed", [7, 3])
def test_the_fused_flash_backward_kernel_does_not_pass_attention_backward(warm_grader, tmp_path: Path, seed: int):
    path = tmp_path / "learner.py"
    path.write_text(textwrap.dedent(FUSED_BACKWARD))
    verdict = warm_grader.grade("attention_backward", path, device="cpu", seed=seed,
                                limits=grade_limits(timeout=30.0))
    assert verdict["status"] != "pass", (verdict["summary"], [(c["name"], c["status"]) for c in verdict["checks"]])
