"""Per-head loop writing into an output buffer made without device=."""
import math

import torch


def gqa_attention(Q, K, V, mask=None):
    B, H, n, d = Q.shape
    G = H // K.shape[1]
    out = torch.zeros(B, H, n, V.shape[-1], dtype=Q.dtype)
    for h in range(H):
        scores = Q[:, h] @ K[:, h // G].transpose(-2, -1) / math.sqrt(d)
        if mask is not None:
            head_mask = mask.expand(B, H, n, K.shape[2])[:, h] if mask.dim() == 4 else mask
            scores = scores.masked_fill(~head_mask, float("-inf"))
        out[:, h] = torch.softmax(scores, dim=-1) @ V[:, h // G]
    return out
