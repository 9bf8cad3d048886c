"""Expands K and V straight to H heads, as if H_kv were always 1."""
import math

import torch


def gqa_attention(Q, K, V, mask=None):
    B, H, n, d = Q.shape
    K = K.expand(B, H, K.shape[2], d)
    V = V.expand(B, H, V.shape[2], V.shape[3])
    scores = Q @ K.transpose(-2, -1) / math.sqrt(d)
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    return torch.softmax(scores, dim=-1) @ V
