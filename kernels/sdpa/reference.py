"""Scaled dot-product attention, written out: scale, mask, stable softmax, weighted sum.

A fully masked row (a query that may see no key) gets zero weights and a zero output, as
F.scaled_dot_product_attention gives; a plain softmax would give NaN there.
"""

import math

import torch


def scaled_dot_product_attention(Q, K, V, mask=None):
    scores = Q @ K.transpose(-2, -1) / math.sqrt(Q.shape[-1])  # (*, n, m)
    if mask is not None:
        allowed = mask if mask.dtype == torch.bool else mask != 0  # 0/1 meaning, never additive
        scores = scores.masked_fill(~allowed, float("-inf"))  # -inf fits every float dtype
    weights = torch.softmax(scores, dim=-1)  # over the keys; softmax subtracts each row's max
    weights = torch.nan_to_num(weights, nan=0.0)  # rows with no allowed key: 0, not NaN
    return weights @ V, weights
