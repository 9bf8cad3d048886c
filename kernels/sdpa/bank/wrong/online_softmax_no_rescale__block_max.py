"""Blocks of 64 keys, each exponentiated against its own max, summed without correction."""
import math

import torch


def scaled_dot_product_attention(Q, K, V, mask=None):
    m = K.shape[-2]
    outputs, totals = 0, 0
    for start in range(0, m, 64):
        k, v = K[..., start:start + 64, :], V[..., start:start + 64, :]
        s = Q @ k.transpose(-2, -1) / math.sqrt(Q.shape[-1])
        if mask is not None:
            s = s.masked_fill(mask[..., start:start + 64] == 0, float("-inf"))
        block_max = s.amax(dim=-1, keepdim=True).nan_to_num(neginf=0.0)
        p = torch.exp(s - block_max)
        outputs = outputs + p @ v
        totals = totals + p.sum(dim=-1, keepdim=True)
    return outputs / totals
