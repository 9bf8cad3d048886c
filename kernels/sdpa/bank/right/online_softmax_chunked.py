"""Flash-attention style: keys in chunks with a running max and running sum."""
import math

import torch


def scaled_dot_product_attention(Q, K, V, mask=None, chunk=2):
    n, m = Q.shape[-2], K.shape[-2]
    batch = torch.broadcast_shapes(Q.shape[:-2], K.shape[:-2])
    if mask is not None:
        mask = torch.broadcast_to(mask != 0, (*batch, n, m))
    running_max = torch.full((*batch, n, 1), float("-inf"), dtype=Q.dtype, device=Q.device)
    running_sum = torch.zeros((*batch, n, 1), dtype=Q.dtype, device=Q.device)
    acc = torch.zeros((*batch, n, V.shape[-1]), dtype=Q.dtype, device=Q.device)
    for start in range(0, m, chunk):
        k, v = K[..., start:start + chunk, :], V[..., start:start + chunk, :]
        s = Q @ k.transpose(-2, -1) / math.sqrt(Q.shape[-1])
        if mask is not None:
            s = s.masked_fill(~mask[..., start:start + chunk], float("-inf"))
        new_max = torch.maximum(running_max, s.amax(dim=-1, keepdim=True))
        safe_max = torch.where(torch.isinf(new_max), torch.zeros_like(new_max), new_max)
        p = torch.exp(s - safe_max)
        correction = torch.exp(running_max - safe_max)
        running_sum = running_sum * correction + p.sum(dim=-1, keepdim=True)
        acc = acc * correction + p @ v
        running_max = new_max
    return acc / running_sum
