"""The records that grade "no fused call" (flash_attention) and "no autograd"
(attention_backward) are checked on core cases only (`TupleDrill.check_case`: `if core and
"record" in result`). A file that is right in float32/float64 and, for float16/bfloat16 inputs,
falls back to `F.scaled_dot_product_attention` (or to autograd) passes: what the drill forbids
is part of the contract in every dtype, like the structural checks half-precision cases
already fail as core (`grading.STRUCTURAL_CHECKS`); only accuracy is an extra note there."""

from __future__ import annotations

import pytest
from grader_helpers import grade_source

pytest.importorskip("torch")

# a correct tiled online softmax; for float16/bfloat16 inputs, F.scaled_dot_product_attention
FUSED_FOR_HALF_PRECISION = """\
import math, torch
import torch.nn.functional as F
def flash_attention(Q, K, V, block_q=64, block_k=64, causal=False):
    n, m, d = Q.shape[-2], K.shape[-2], Q.shape[-1]
    if Q.dtype in (torch.float16, torch.bfloat16):
        # half precision: fall back to PyTorch's fused kernel (accurate), lse from the scores
        keep = torch.ones(n, m, dtype=torch.bool, device=Q.device).tril(diagonal=m - n) if causal else None
        out = F.scaled_dot_product_attention(Q, K, V, attn_mask=keep)
        s = (Q.float() @ K.float().transpose(-2, -1)) / math.sqrt(d)
        if causal:
            s = s.masked_fill(~keep, float("-inf"))
        return torch.nan_to_num(out), torch.logsumexp(s, dim=-1)
    wide = torch.promote_types(Q.dtype, torch.float32)
    scale = 1 / math.sqrt(d)
    lead = Q.shape[:-2]
    out = torch.zeros(*lead, n, V.shape[-1], dtype=wide, device=Q.device)
    lse = torch.full((*lead, n), float("-inf"), dtype=wide, device=Q.device)
    for qs in range(0, n, block_q):
        qe = min(qs + block_q, n)
        q = Q[..., qs:qe, :].to(wide)
        mx = torch.full((*lead, qe - qs), float("-inf"), dtype=wide, device=Q.device)
        l = torch.zeros((*lead, qe - qs), dtype=wide, device=Q.device)
        acc = torch.zeros(*lead, qe - qs, V.shape[-1], dtype=wide, device=Q.device)
        for ks in range(0, m, block_k):
            ke = min(ks + block_k, m)
            if causal and ks > qe - 1 + (m - n):
                break
            s = (q @ K[..., ks:ke, :].to(wide).transpose(-2, -1)) * scale
            if causal:
                qi = torch.arange(qs, qe, device=Q.device)[:, None]
                kj = torch.arange(ks, ke, device=Q.device)[None, :]
                s = s.masked_fill(kj > qi + (m - n), float("-inf"))
            new = torch.maximum(mx, s.amax(-1))
            safe = torch.where(torch.isinf(new), torch.zeros_like(new), new)
            p = torch.exp(s - safe[..., None])
            alpha = torch.exp(torch.where(torch.isinf(mx), torch.full_like(mx, float("-inf")), mx - safe))
            l = l * alpha + p.sum(-1)
            acc = acc * alpha[..., None] + p @ V[..., ks:ke, :].to(wide)
            mx = new
        good = l > 0
        out[..., qs:qe, :] = torch.where(good[..., None], acc / torch.where(good, l, torch.ones_like(l))[..., None], torch.zeros_like(acc))
        lse[..., qs:qe] = torch.where(good, mx + torch.log(torch.where(good, l, torch.ones_like(l))), torch.full_like(l, float("-inf")))
    return out.to(Q.dtype), lse
"""

# the gradients by hand; for float16/bfloat16 inputs, torch.autograd.grad under enable_grad
AUTOGRAD_FOR_HALF_PRECISION = """\
import torch


def _by_hand(Q, K, V, dO, mask=None, scale=None):
    q, k, v, do = Q.double(), K.double(), V.double(), dO.double()
    scale = q.shape[-1] ** -0.5 if scale is None else scale
    s = torch.einsum("...nd,...md->...nm", q, k) * scale
    if mask is not None:
        s = s.masked_fill(mask == 0, float("-inf"))
    row_max = s.amax(-1, keepdim=True)
    row_max = torch.where(torch.isinf(row_max), torch.zeros_like(row_max), row_max)
    e = torch.exp(s - row_max)
    total = e.sum(-1, keepdim=True)
    p = e / torch.where(total == 0, torch.ones_like(total), total)
    o = torch.einsum("...nm,...mv->...nv", p, v)
    d_row = (do * o).sum(-1, keepdim=True)
    ds = p * (torch.einsum("...nv,...mv->...nm", do, v) - d_row)
    dq = torch.einsum("...nm,...md->...nd", ds, k) * scale
    dk = torch.einsum("...nm,...nd->...md", ds, q) * scale
    dv = torch.einsum("...nm,...nv->...mv", p, do)
    return dq.to(Q.dtype), dk.to(K.dtype), dv.to(V.dtype)


def attention_backward(Q, K, V, dO, mask=None, scale=None):
    if Q.dtype in (torch.float16, torch.bfloat16):  # half precision: let autograd do it, in float32
        with torch.enable_grad():
            q, k, v = (t.detach().float().requires_grad_(True) for t in (Q, K, V))
            s = (q @ k.transpose(-2, -1)) * (q.shape[-1] ** -0.5 if scale is None else scale)
            if mask is not None:
                s = s.masked_fill(mask == 0, float("-inf"))
            o = torch.nan_to_num(torch.softmax(s, dim=-1)) @ v
            dq, dk, dv = torch.autograd.grad(o, (q, k, v), dO.float())
        return dq.to(Q.dtype), dk.to(K.dtype), dv.to(V.dtype)
    return _by_hand(Q, K, V, dO, mask, scale)
"""


def test_a_fused_call_on_half_precision_inputs_fails_no_fused_call(warm_grader, tmp_path):
    verdict = grade_source(warm_grader, tmp_path, "flash_attention", FUSED_FOR_HALF_PRECISION)
    assert verdict["status"] == "fail", verdict
    checks = {row["name"]: row for row in verdict["checks"]}
    assert checks["no fused call"]["status"] == "fail" and "float16" in checks["no fused call"]["message"], checks


def test_autograd_on_half_precision_inputs_fails_no_autograd(warm_grader, tmp_path):
    verdict = grade_source(warm_grader, tmp_path, "attention_backward", AUTOGRAD_FOR_HALF_PRECISION)
    assert verdict["status"] == "fail", verdict
    checks = {row["name"]: row for row in verdict["checks"]}
    assert checks["no autograd"]["status"] == "fail", checks
