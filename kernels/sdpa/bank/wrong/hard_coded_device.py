"""Builds the blocked-score filler on the default device, not the inputs' one."""
import math

import torch


def scaled_dot_product_attention(Q, K, V, mask=None):
    scores = Q @ K.transpose(-2, -1) / math.sqrt(Q.shape[-1])
    if mask is not None:
        blocked = torch.full(scores.shape, float("-inf"), dtype=scores.dtype)
        scores = torch.where(mask.bool(), scores, blocked)
    return torch.softmax(scores, dim=-1) @ V
