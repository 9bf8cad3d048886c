"""Computes in float64 and casts back; zeroes fully masked rows like PyTorch."""
import math

import torch


def scaled_dot_product_attention(Q, K, V, mask=None):
    q, k, v = Q.double(), K.double(), V.double()
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    if mask is not None:
        scores = scores.masked_fill(~mask.bool(), float("-inf"))
    weights = torch.nan_to_num(torch.softmax(scores, dim=-1), nan=0.0)
    return (weights @ v).to(Q.dtype)
