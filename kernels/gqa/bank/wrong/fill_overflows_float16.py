"""Fills blocked scores with -1e9: fine in float32, raises in float16."""
import math

import torch


def gqa_attention(Q, K, V, mask=None):
    G = Q.shape[1] // K.shape[1]
    K, V = K.repeat_interleave(G, dim=1), V.repeat_interleave(G, dim=1)
    scores = Q @ K.transpose(-2, -1) / math.sqrt(Q.shape[-1])
    if mask is not None:
        scores = scores.masked_fill(~mask, -1e9)
    weights = torch.softmax(scores, dim=-1)
    return weights @ V, weights
