"""Zeroes blocked weights after the softmax without renormalizing."""
import math

import torch


def scaled_dot_product_attention(Q, K, V, mask=None):
    weights = torch.softmax(Q @ K.transpose(-2, -1) / math.sqrt(Q.shape[-1]), dim=-1)
    if mask is not None:
        weights = weights * mask
    return weights @ V
