"""repeat_interleave along the sequence dim, then a reshape into H heads."""
import math

import torch


def gqa_attention(Q, K, V, mask=None):
    B, H, n, d = Q.shape
    G = H // K.shape[1]
    K = K.repeat_interleave(G, dim=2).reshape(B, H, K.shape[2], d)
    V = V.repeat_interleave(G, dim=2).reshape(B, H, V.shape[2], V.shape[3])
    scores = Q @ K.transpose(-2, -1) / math.sqrt(d)
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    return torch.softmax(scores, dim=-1) @ V
