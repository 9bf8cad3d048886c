"""Subtracts one max over the whole tensor: rows far below it underflow to 0/0."""
import math

import torch


def scaled_dot_product_attention(Q, K, V, mask=None):
    scores = Q @ K.transpose(-2, -1) / math.sqrt(Q.shape[-1])
    if mask is not None:
        scores = scores.masked_fill(mask == 0, float("-inf"))
    exps = torch.exp(scores - scores.max())
    return exps / exps.sum(dim=-1, keepdim=True) @ V
