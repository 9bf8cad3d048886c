"""Forgets to divide the scores by sqrt(d)."""
import torch


def gqa_attention(Q, K, V, mask=None):
    G = Q.shape[1] // K.shape[1]
    K, V = K.repeat_interleave(G, dim=1), V.repeat_interleave(G, dim=1)
    scores = Q @ K.transpose(-2, -1)
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    return torch.softmax(scores, dim=-1) @ V
