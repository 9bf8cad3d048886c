"""The oracle, and the tiled algorithm with one knob turned the wrong way (the known mistakes).

Causal here is aligned bottom-right, as in FlashAttention 2 and decoding with a cache: query i
may see key j when j <= i + (m - n). With n == m that is the usual lower triangle; with n > m
the first n - m queries see no key at all (fully masked rows: output 0, log-sum-exp -inf).
"""

from __future__ import annotations

import math

import torch

NEG_INF = float("-inf")


def allowed_keys(n: int, m: int, causal: bool, rows=None, cols=None, offset: int | None = None) -> torch.Tensor | None:
    """Bool `(rows, cols)` (default all n x m): True where the query may attend to the key.
    `offset` defaults to m - n (bottom-right); 0 is PyTorch's `is_causal` (top-left)."""
    if not causal:
        return None
    rows = torch.arange(n) if rows is None else rows
    cols = torch.arange(m) if cols is None else cols
    return cols[None, :] <= rows[:, None] + (m - n if offset is None else offset)


def oracle(Q, K, V, causal: bool) -> tuple[torch.Tensor, torch.Tensor]:
    """float64 (output, lse) on CPU; fully masked rows give 0 and -inf."""
    q, k, v = (t.cpu().to(torch.float64) for t in (Q, K, V))
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    allowed = allowed_keys(q.shape[-2], k.shape[-2], causal)
    if allowed is not None:
        scores = scores.masked_fill(~allowed, NEG_INF)
    lse = torch.logsumexp(scores, dim=-1)
    safe = torch.where(torch.isfinite(lse), lse, torch.zeros_like(lse))
    weights = torch.exp(scores - safe.unsqueeze(-1))
    return weights @ v, lse


def naive(Q, K, V, causal: bool):
    """(output, lse) the plain way in the inputs' dtype: the error floor of a correct computation."""
    scores = Q @ K.transpose(-2, -1) / math.sqrt(Q.shape[-1])
    allowed = allowed_keys(Q.shape[-2], K.shape[-2], causal)
    if allowed is not None:
        scores = scores.masked_fill(~allowed.to(Q.device), NEG_INF)
    lse = torch.logsumexp(scores, dim=-1)
    return torch.softmax(scores, dim=-1) @ V, lse.to(torch.promote_types(Q.dtype, torch.float32))


def block_is_kept(rule: str, q_start: int, q_end: int, k_start: int, k_end: int, offset: int) -> bool:
    """Whether a causal (query block, key block) pair is computed under `rule`.

    "visible": some query of the block sees some key of it (the right rule);
    "below": only blocks every query sees entirely (drops the diagonal blocks);
    "before_start": only key blocks starting before the query block does (drops them too).
    """
    if rule == "visible":
        return k_start <= q_end - 1 + offset
    if rule == "below":
        return k_end - 1 <= q_start + offset
    return k_start < q_start + offset


def tiled(Q, K, V, block_q: int, block_k: int, causal: bool, *, dtype=torch.float64,
          rescale_sum: bool = True, rescale_output: bool = True, update_max: bool = True,
          max_init: float = NEG_INF, keep: str = "visible", safe: bool = True, guard: bool = False,
          lse_adds_max: bool = True, lse_known: bool = True, top_left: bool = False,
          pad_bias: float | None = None):
    """(output, lse) of online-softmax attention computed block by block, as a learner writes it.

    `safe`: a running max of -inf is replaced by 0 before subtracting (no -inf - -inf);
    `guard`: a zero running sum gives output 0 instead of 0/0. `lse_known=False` returns a NaN
    lse (undefined: the mistake's lse depends on details the learner may write either way).
    `top_left`: causal aligned top-left (j <= i) instead of bottom-right. `pad_bias`: K and V
    padded with zero rows to whole key blocks, the padding kept out by adding this finite bias
    (-1e4) to its scores (non-causal).
    """
    q, k, v = (t.cpu().to(dtype) for t in (Q, K, V))
    n, m, scale = q.shape[-2], k.shape[-2], 1 / math.sqrt(q.shape[-1])
    lead, offset = q.shape[:-2], (0 if top_left else m - n)
    outputs, lses = [], []
    for q_start in range(0, n, block_q):
        q_end = min(q_start + block_q, n)
        rows = q_end - q_start
        q_block = q[..., q_start:q_end, :]
        running_max = torch.full((*lead, rows), max_init, dtype=dtype)
        running_sum = torch.zeros((*lead, rows), dtype=dtype)
        acc = torch.zeros((*lead, rows, v.shape[-1]), dtype=dtype)
        for k_start in range(0, m, block_k):
            k_end = min(k_start + block_k, m)
            if causal and not block_is_kept(keep, q_start, q_end, k_start, k_end, offset):
                continue
            scores = q_block @ k[..., k_start:k_end, :].transpose(-2, -1) * scale
            allowed = allowed_keys(n, m, causal, torch.arange(q_start, q_end), torch.arange(k_start, k_end), offset)
            if allowed is not None:
                scores = scores.masked_fill(~allowed, NEG_INF)
            v_block = v[..., k_start:k_end, :]
            if pad_bias is not None and not causal and k_end - k_start < block_k:
                missing = block_k - (k_end - k_start)
                scores = torch.cat([scores, torch.full((*scores.shape[:-1], missing), pad_bias, dtype=dtype)], -1)
                v_block = torch.cat([v_block, torch.zeros((*v_block.shape[:-2], missing, v_block.shape[-1]),
                                                          dtype=dtype)], -2)
            new_max = torch.maximum(running_max, scores.amax(dim=-1))
            base = torch.where(new_max == NEG_INF, 0.0, new_max) if safe else new_max
            p = torch.exp(scores - base.unsqueeze(-1))
            alpha = torch.exp(running_max - base)
            running_sum = (alpha * running_sum if rescale_sum else running_sum) + p.sum(dim=-1)
            acc = (alpha.unsqueeze(-1) * acc if rescale_output else acc) + p @ v_block
            if update_max:
                running_max = new_max
        total = running_sum.unsqueeze(-1)
        out = torch.where(total > 0, acc / total, 0.0) if guard else acc / total
        outputs.append(out)
        log_sum = torch.log(running_sum)
        lses.append(running_max + log_sum if lse_adds_max else log_sum)
    lse_dtype = torch.promote_types(dtype, torch.float32)
    out = torch.cat(outputs, dim=-2) if outputs else torch.zeros((*lead, 0, v.shape[-1]), dtype=dtype)
    lse = torch.cat(lses, dim=-1).to(lse_dtype) if lses else torch.zeros((*lead, 0), dtype=lse_dtype)
    if not lse_known:
        lse = torch.full_like(lse, float("nan"))
    return out, lse
