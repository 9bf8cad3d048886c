"""Computes in float32 whatever the inputs' dtype, and casts back: right for float32 inputs, but
float32's round-off (~1e-7) is past float64's tolerance."""
import math

import torch


def scaled_dot_product_attention(Q, K, V, mask=None):
    dtype = Q.dtype
    Q, K, V = Q.float(), K.float(), V.float()
    scores = Q @ K.transpose(-2, -1) / math.sqrt(Q.shape[-1])
    if mask is not None:
        scores = scores.masked_fill(mask == 0, float("-inf"))
    weights = torch.softmax(scores, dim=-1)
    return (weights @ V).to(dtype), weights.to(dtype)
