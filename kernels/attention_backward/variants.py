"""The oracle (autograd of the forward, in float64) and the backward written by hand, with one
step done the way learners get it wrong (the known mistakes)."""

from __future__ import annotations

import math

import torch

NEG_INF = float("-inf")


def scale_of(Q: torch.Tensor, scale: float | None) -> float:
    return 1 / math.sqrt(Q.shape[-1]) if scale is None else scale


def safe_forward(Q, K, V, mask, scale):
    """softmax(scale Q K^T, masked) V with rows that see no key giving 0 (PyTorch's policy)."""
    scores = Q @ K.transpose(-2, -1) * scale
    if mask is not None:
        scores = scores.masked_fill(~mask, NEG_INF)
    row_max = scores.amax(dim=-1, keepdim=True)
    row_max = torch.where(torch.isfinite(row_max), row_max, torch.zeros_like(row_max))
    exps = torch.exp(scores - row_max)
    totals = exps.sum(dim=-1, keepdim=True)
    return exps / torch.where(totals > 0, totals, torch.ones_like(totals)) @ V


def autograd_backward(Q, K, V, dO, mask, scale, dtype=torch.float64):
    """(dQ, dK, dV) by autograd of `safe_forward` in `dtype`, on CPU: the oracle in float64."""
    leaves = [t.detach().cpu().to(dtype).requires_grad_() for t in (Q, K, V)]
    with torch.enable_grad():
        q, k, v = leaves
        out = safe_forward(q, k, v, None if mask is None else mask.cpu(), scale_of(Q, scale))
        grads = torch.autograd.grad(out, leaves, dO.detach().cpu().to(dtype))
    return tuple(g.detach() for g in grads)


def by_hand(Q, K, V, dO, mask, scale, *, dtype=torch.float64, dq_scale: bool = True, dk_scale: bool = True,
            rowsum: bool = True, rowsum_dim: int = -1, dk_transposed: bool = True, dq_transposed: bool = True,
            dv_transposed: bool = True, mask_in_backward: bool = True, safe: bool = True):
    """(dQ, dK, dV) from the formulas, with one step optionally wrong; None where the mistake
    cannot happen on these inputs (a swapped transpose on non-square scores raises instead)."""
    n, m = Q.shape[-2], K.shape[-2]
    if n != m and not (dk_transposed and dq_transposed and dv_transposed):
        return None
    if mask is None and not mask_in_backward:
        return None
    q, k, v, do = (t.cpu().to(dtype) for t in (Q, K, V, dO))
    factor = scale_of(Q, scale)
    scores = q @ k.transpose(-2, -1) * factor
    if mask is not None and mask_in_backward:
        scores = scores.masked_fill(~mask.cpu(), NEG_INF)
    p = torch.softmax(scores, dim=-1)
    if safe:
        p = torch.nan_to_num(p, nan=0.0)
    dv = (p.transpose(-2, -1) if dv_transposed else p) @ do
    dp = do @ v.transpose(-2, -1)
    ds = p * (dp - (dp * p).sum(dim=rowsum_dim, keepdim=True)) if rowsum else p * dp
    dq = (ds if dq_transposed else ds.transpose(-2, -1)) @ k * (factor if dq_scale else 1.0)
    dk = (ds.transpose(-2, -1) if dk_transposed else ds) @ q * (factor if dk_scale else 1.0)
    return dq, dk, dv
