"""Reference attention kernels: the float64 oracle the drills grade against, and a fast path.

Mask convention (the users' notes, and `F.scaled_dot_product_attention` with a bool mask):
nonzero / True = the query MAY attend to that key, zero / False = blocked. Masks may be bool,
int or float 0/1 and only need to broadcast to the scores' shape `(*, n, m)`.

Fully masked rows (a query that may attend to nothing): the oracle returns zero weights and a
zero output for that row. This is what `F.scaled_dot_product_attention` returns too (PyTorch
>= 2.5 uses a "safe" softmax); a hand-written `masked_fill(-inf)` + `softmax` gives NaN there,
and `masked_fill(-1e9)` gives the mean of V. The drills only report that row, never fail on it.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F


def allowed_mask(mask: torch.Tensor, device: torch.device | str | None = None) -> torch.Tensor:
    """A bool tensor, True where attending is allowed (any nonzero value of `mask`)."""
    allowed = mask if mask.dtype == torch.bool else mask != 0
    return allowed if device is None else allowed.to(device)


def fully_masked_rows(mask: torch.Tensor | None, scores_shape: torch.Size) -> torch.Tensor:
    """Bool `(*, n)` tensor: True for query rows that may attend to no key at all."""
    leading = scores_shape[:-1]
    if mask is None:
        return torch.zeros(leading, dtype=torch.bool)
    allowed = allowed_mask(mask).cpu().expand(scores_shape)
    return ~allowed.any(dim=-1)


def sdpa_oracle(Q, K, V, mask=None, return_weights: bool = False):
    """softmax(Q K^T / sqrt(d_k), masked) V computed in float64; returns float64 tensors.

    Q `(*, n, d_k)`, K `(*, m, d_k)`, V `(*, m, d_v)`; leading dims broadcast. Numerically stable
    (row max subtracted), and fully masked rows give zero weights and zero output.
    """
    q, k, v = (t.to(torch.float64) for t in (Q, K, V))
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    if mask is not None:
        scores = scores.masked_fill(~allowed_mask(mask, scores.device), float("-inf"))
    row_max = scores.amax(dim=-1, keepdim=True)
    row_max = torch.where(torch.isfinite(row_max), row_max, torch.zeros_like(row_max))
    exps = torch.exp(scores - row_max)
    totals = exps.sum(dim=-1, keepdim=True)
    weights = torch.where(totals > 0, exps / totals.clamp_min(torch.finfo(torch.float64).tiny), 0.0)
    output = weights @ v
    return (output, weights) if return_weights else output


def sdpa_fast(Q, K, V, mask=None):
    """The same attention in the inputs' dtype via PyTorch's fused kernel (for timing)."""
    attn_mask = None if mask is None else allowed_mask(mask, Q.device)
    return F.scaled_dot_product_attention(Q, K, V, attn_mask=attn_mask)


def causal_mask(n: int, device=None) -> torch.Tensor:
    """`(n, n)` bool mask, True where key j <= query i (each position sees itself and the past)."""
    return torch.ones(n, n, dtype=torch.bool, device=device).tril()


def padding_mask(lengths, max_len: int, device=None) -> torch.Tensor:
    """`(batch, 1, max_len)` bool mask, True where key position < that sequence's length.

    Broadcasts to `(batch, max_len, max_len)`: padding keys are blocked for every query. Add a
    head dim with `.unsqueeze(1)` for `(batch, heads, n, m)` scores.
    """
    lengths = torch.as_tensor(lengths, device=device).reshape(-1)
    positions = torch.arange(max_len, device=lengths.device)
    return (positions[None, :] < lengths[:, None]).unsqueeze(1)


def combine_masks(*masks) -> torch.Tensor | None:
    """Logical AND of several masks (any 0/1 dtype, broadcast together); `None`s are skipped."""
    present = [allowed_mask(m) for m in masks if m is not None]
    if not present:
        return None
    combined = present[0]
    for mask in present[1:]:
        combined = combined & mask.to(combined.device)
    return combined


def split_heads(x: torch.Tensor, num_heads: int) -> torch.Tensor:
    """`(batch, seq, d_model)` -> `(batch, heads, seq, d_head)`."""
    batch, seq, d_model = x.shape
    return x.reshape(batch, seq, num_heads, d_model // num_heads).transpose(1, 2)


def merge_heads(x: torch.Tensor) -> torch.Tensor:
    """`(batch, heads, seq, d_head)` -> `(batch, seq, heads * d_head)`."""
    batch, heads, seq, d_head = x.shape
    return x.transpose(1, 2).reshape(batch, seq, heads * d_head)


def mha_forward(Q, K, V, W_q, b_q, W_k, b_k, W_v, b_v, W_o, b_o, num_heads: int, mask=None,
                return_weights: bool = False):
    """Multi-head attention in float64 with `nn.Linear`-style weights (`y = x W^T + b`).

    Q `(batch, n, d_model)`, K and V `(batch, m, d_model)`; `mask` broadcastable to
    `(batch, 1, n, m)` (the same mask for every head). Returns float64 output `(batch, n,
    d_model)`, and with `return_weights` also the weights `(batch, heads, n, m)`.
    """
    f64 = [t.to(torch.float64) for t in (Q, K, V, W_q, b_q, W_k, b_k, W_v, b_v, W_o, b_o)]
    q, k, v, wq, bq, wk, bk, wv, bv, wo, bo = f64
    heads_q = split_heads(q @ wq.T + bq, num_heads)
    heads_k = split_heads(k @ wk.T + bk, num_heads)
    heads_v = split_heads(v @ wv.T + bv, num_heads)
    attended, weights = sdpa_oracle(heads_q, heads_k, heads_v, mask, return_weights=True)
    output = merge_heads(attended) @ wo.T + bo
    return (output, weights) if return_weights else output
