"""Scales by sqrt(d_model) = sqrt(H * d), as if the heads were still merged."""
import math

import torch


def gqa_attention(Q, K, V, mask=None):
    B, H, n, d = Q.shape
    G = H // K.shape[1]
    K, V = K.repeat_interleave(G, dim=1), V.repeat_interleave(G, dim=1)
    scores = Q @ K.transpose(-2, -1) / math.sqrt(H * d)
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    return torch.softmax(scores, dim=-1) @ V
