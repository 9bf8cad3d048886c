"""Blocks of 32 keys with a running max, but the running sums are never rescaled."""
import math

import torch


def scaled_dot_product_attention(Q, K, V, mask=None, block=32):
    lead = torch.broadcast_shapes(Q.shape[:-2], K.shape[:-2])
    n, m = Q.shape[-2], K.shape[-2]
    allowed = None if mask is None else torch.broadcast_to(mask != 0, (*lead, n, m))
    running_max = torch.full((*lead, n, 1), float("-inf"), dtype=Q.dtype, device=Q.device)
    total = torch.zeros((*lead, n, 1), dtype=Q.dtype, device=Q.device)
    acc = torch.zeros((*lead, n, V.shape[-1]), dtype=Q.dtype, device=Q.device)
    for start in range(0, m, block):
        s = Q @ K[..., start:start + block, :].transpose(-2, -1) / math.sqrt(Q.shape[-1])
        if allowed is not None:
            s = s.masked_fill(~allowed[..., start:start + block], float("-inf"))
        running_max = torch.maximum(running_max, s.amax(dim=-1, keepdim=True))
        p = torch.exp(s - torch.nan_to_num(running_max, neginf=0.0))
        total = total + p.sum(dim=-1, keepdim=True)
        acc = acc + p @ V[..., start:start + block, :]
    return acc / total
