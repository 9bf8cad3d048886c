"""Copies the KV heads with .repeat: the heads come out tiled (0, 1, 0, 1), not grouped."""
import math

import torch


def gqa_attention(Q, K, V, mask=None):
    n_rep = Q.shape[1] // K.shape[1]
    K = K.repeat(1, n_rep, 1, 1)
    V = V.repeat(1, n_rep, 1, 1)
    scores = Q @ K.transpose(-2, -1) / math.sqrt(Q.shape[-1])
    if mask is not None:
        scores = scores.masked_fill(mask == 0, float("-inf"))
    return torch.softmax(scores, dim=-1) @ V
