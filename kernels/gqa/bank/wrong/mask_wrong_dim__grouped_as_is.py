"""Grouped layout (B, H_kv, G, n, m) with the 4-D mask applied without a group dim."""
import math

import torch


def gqa_attention(Q, K, V, mask=None):
    B, H, n, d = Q.shape
    H_kv = K.shape[1]
    q = Q.view(B, H_kv, H // H_kv, n, d)
    scores = q @ K.unsqueeze(2).transpose(-2, -1) / math.sqrt(d)  # (B, H_kv, G, n, m)
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    out = torch.softmax(scores, dim=-1) @ V.unsqueeze(2)
    return out.reshape(B, H, n, V.shape[-1])
