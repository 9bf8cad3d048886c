"""Multiplies the scores by the mask: a blocked score becomes 0, which still gets weight."""
import math

import torch


def gqa_attention(Q, K, V, mask=None):
    G = Q.shape[1] // K.shape[1]
    K, V = K.repeat_interleave(G, dim=1), V.repeat_interleave(G, dim=1)
    scores = Q @ K.transpose(-2, -1) / math.sqrt(Q.shape[-1])
    if mask is not None:
        scores = scores * mask
    return torch.softmax(scores, dim=-1) @ V
