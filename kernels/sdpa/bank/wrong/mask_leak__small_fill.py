"""Fills blocked scores with -1e4 (fine for fp16 ranges, leaks when scores are very negative)."""
import math

import torch


def scaled_dot_product_attention(Q, K, V, mask=None):
    scores = Q @ K.transpose(-2, -1) / math.sqrt(Q.shape[-1])
    if mask is not None:
        scores = scores.masked_fill(mask == 0, -1e4)
    return torch.softmax(scores, dim=-1) @ V
