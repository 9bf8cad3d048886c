"""Groups the query heads as (G, H_kv) instead of (H_kv, G)."""
import math

import torch


def gqa_attention(Q, K, V, mask=None):
    B, H, n, d = Q.shape
    H_kv, m = K.shape[1], K.shape[2]
    G = H // H_kv
    q = Q.reshape(B, G, H_kv, n, d)
    scores = q @ K.unsqueeze(1).transpose(-2, -1) / math.sqrt(d)  # (B, G, H_kv, n, m)
    if mask is not None:
        scores = scores.masked_fill(~mask.expand(B, H, n, m).reshape(B, G, H_kv, n, m), float("-inf"))
    out = torch.softmax(scores, dim=-1) @ V.unsqueeze(1)
    return out.reshape(B, H, n, V.shape[-1])
