"""Builds the additive bias (0 / -inf) of a 2-D mask once per (shape, dtype, device) and keeps it
in a global: a 2-D mask is shared by every batch item and head ("it is the causal mask"), so
rebuilding it on every call looked wasteful.

Wrong because a later call with ANOTHER 2-D mask of the same shape (e.g. a (6, 6) random mask
after a (6, 6) causal one, both allowed by the statement) is masked with the first call's
pattern. The grader missed it (a hunt found it passing) because the second inputs of a case (`AGAIN`) keep a 2-D mask
as it is (only masks with a batch dim are flipped), and no two graded cases hand over
different 2-D masks of the same shape, dtype and device.
Concrete input: mask=tril(ones(6, 6)) then mask=triu(ones(6, 6)), Q/K/V randn(2, 6, 4), float32.
Caught since by the second inputs of a case called again, whose 2-D mask now has its rows reversed with the queries.
"""
import math

import torch

_bias = {}


def scaled_dot_product_attention(Q, K, V, mask=None):
    scores = Q @ K.transpose(-2, -1) / math.sqrt(Q.shape[-1])
    if mask is not None:
        if mask.dim() == 2:
            key = (tuple(mask.shape), mask.dtype, scores.dtype, mask.device)
            if key not in _bias:
                _bias[key] = torch.zeros(mask.shape, dtype=scores.dtype, device=mask.device).masked_fill(
                    mask == 0, float("-inf"))
            bias = _bias[key]
        else:
            bias = torch.zeros(mask.shape, dtype=scores.dtype, device=mask.device).masked_fill(
                mask == 0, float("-inf"))
        scores = scores + bias
    return torch.nan_to_num(torch.softmax(scores, dim=-1)) @ V
