"""Keeps a 64x64 all-allowed mask for the no-mask case and slices it to (n, m)."""
import math

import torch

_ALL = torch.ones(64, 64, dtype=torch.bool)


def scaled_dot_product_attention(Q, K, V, mask=None):
    n, m = Q.shape[-2], K.shape[-2]
    allowed = _ALL[:n, :m] if mask is None else mask.bool()
    scores = Q @ K.transpose(-2, -1) / math.sqrt(Q.shape[-1])
    scores = scores.masked_fill(~allowed.to(scores.device), float("-inf"))
    return torch.softmax(scores, dim=-1) @ V
