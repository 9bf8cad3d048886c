"""Reads d_k from the wrong axis: Q.size(1) is the number of heads."""
import math

import torch


def gqa_attention(Q, K, V, mask=None):
    d_k = Q.size(1)
    G = Q.size(1) // K.size(1)
    K, V = K.repeat_interleave(G, dim=1), V.repeat_interleave(G, dim=1)
    scores = torch.matmul(Q, K.transpose(-2, -1)) / math.sqrt(d_k)
    if mask is not None:
        scores = scores.masked_fill(mask == 0, float("-inf"))
    return torch.matmul(torch.softmax(scores, dim=-1), V)
