"""Subtracts the max over the queries (dim=-2) instead of each row's own max."""
import math

import torch


def scaled_dot_product_attention(Q, K, V, mask=None):
    scores = Q @ K.transpose(-2, -1) / math.sqrt(Q.shape[-1])
    if mask is not None:
        scores = scores.masked_fill(mask == 0, float("-inf"))
    column_max = scores.amax(dim=-2, keepdim=True)
    column_max = torch.where(torch.isinf(column_max), torch.zeros_like(column_max), column_max)
    exps = torch.exp(scores - column_max)
    return (exps / exps.sum(dim=-1, keepdim=True)) @ V
