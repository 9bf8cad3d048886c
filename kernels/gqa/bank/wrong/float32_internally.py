"""Computes in float32 whatever the inputs' dtype, and casts back: float64 inputs lose precision."""
import math

import torch


def gqa_attention(Q, K, V, mask=None):
    dtype = Q.dtype
    Q, K, V = Q.float(), K.float(), V.float()
    G = Q.shape[1] // K.shape[1]
    K, V = K.repeat_interleave(G, dim=1), V.repeat_interleave(G, dim=1)
    scores = Q @ K.transpose(-2, -1) / math.sqrt(Q.shape[-1])
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    return (torch.softmax(scores, dim=-1) @ V).to(dtype)
