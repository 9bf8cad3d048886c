"""Loops over the query heads and indexes K and V with the same head number."""
import math

import torch


def gqa_attention(Q, K, V, mask=None):
    B, H, n, d = Q.shape
    out = torch.empty(B, H, n, V.shape[-1], dtype=Q.dtype, device=Q.device)
    for h in range(H):
        scores = Q[:, h] @ K[:, h].transpose(-2, -1) / math.sqrt(d)
        if mask is not None:
            m = mask if mask.dim() == 2 else mask[:, h if mask.shape[1] > 1 else 0]
            scores = scores.masked_fill(~m, float("-inf"))
        out[:, h] = torch.softmax(scores, dim=-1) @ V[:, h]
    return out
