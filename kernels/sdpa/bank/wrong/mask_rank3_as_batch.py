"""Treats a 3-D mask as (batch, n, m) and adds a heads dim, though it broadcasts as (heads, n, m)."""
import math

import torch


def scaled_dot_product_attention(Q, K, V, mask=None):
    scores = Q @ K.transpose(-2, -1) / math.sqrt(Q.shape[-1])
    if mask is not None:
        if mask.dim() == 3 and scores.dim() == 4:
            mask = mask.unsqueeze(1)
        scores = scores.masked_fill(mask == 0, float("-inf"))
    return torch.softmax(scores, dim=-1) @ V
