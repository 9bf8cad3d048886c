"""Computes in float64 for accuracy and forgets to cast back."""
import math

import torch


def scaled_dot_product_attention(Q, K, V, mask=None):
    Q, K, V = Q.double(), K.double(), V.double()
    scores = Q @ K.transpose(-2, -1) / math.sqrt(Q.shape[-1])
    if mask is not None:
        scores = scores.masked_fill(mask == 0, float("-inf"))
    return torch.softmax(scores, dim=-1) @ V
