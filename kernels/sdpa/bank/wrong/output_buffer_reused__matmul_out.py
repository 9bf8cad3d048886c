"""Writes the output into a buffer kept per (shape, dtype, device), `torch.matmul(..., out=)`, to
save an allocation per call, and returns that buffer. Every call of the same shapes returns the
same tensor object, so the next call overwrites the result the caller is still holding: outputs
kept across calls (one per head group, per decoded token, a before/after comparison) all turn
into the last call's output."""
import math

import torch

_OUT = {}


def scaled_dot_product_attention(Q, K, V, mask=None):
    scores = Q @ K.transpose(-2, -1) / math.sqrt(Q.shape[-1])
    if mask is not None:
        allowed = mask if mask.dtype == torch.bool else mask != 0
        scores = scores.masked_fill(~allowed, float("-inf"))
    weights = torch.nan_to_num(torch.softmax(scores, dim=-1), nan=0.0)
    shape = (*torch.broadcast_shapes(weights.shape[:-2], V.shape[:-2]), weights.shape[-2], V.shape[-1])
    key = (shape, V.dtype, V.device)
    if key not in _OUT:
        _OUT[key] = torch.empty(shape, dtype=V.dtype, device=V.device)
    return torch.matmul(weights, V, out=_OUT[key])
