"""Turns the 0/1 mask into an additive bias; returns (output, weights)."""
import math

import torch


def scaled_dot_product_attention(Q, K, V, mask=None):
    scores = (Q / math.sqrt(Q.size(-1))) @ K.transpose(-1, -2)
    if mask is not None:
        bias = torch.zeros(mask.shape, dtype=scores.dtype, device=scores.device)
        scores = scores + bias.masked_fill(mask == 0, float("-inf"))
    weights = torch.softmax(scores, dim=-1)
    return weights @ V, weights
