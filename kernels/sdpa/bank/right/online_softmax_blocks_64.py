"""FlashAttention's recurrence: blocks of 64 keys, running max, rescaled sums."""
import math

import torch


def scaled_dot_product_attention(Q, K, V, mask=None, block=64):
    lead = torch.broadcast_shapes(Q.shape[:-2], K.shape[:-2])
    n, m = Q.shape[-2], K.shape[-2]
    allowed = None if mask is None else torch.broadcast_to(mask.bool(), (*lead, n, m))
    best = torch.full((*lead, n, 1), float("-inf"), dtype=torch.float32, device=Q.device)
    total = torch.zeros((*lead, n, 1), dtype=torch.float32, device=Q.device)
    acc = torch.zeros((*lead, n, V.shape[-1]), dtype=torch.float32, device=Q.device)
    work = torch.float64 if Q.dtype == torch.float64 else torch.float32
    best, total, acc = best.to(work), total.to(work), acc.to(work)
    for start in range(0, m, block):
        k = K[..., start:start + block, :].to(work)
        v = V[..., start:start + block, :].to(work)
        s = Q.to(work) @ k.transpose(-2, -1) / math.sqrt(Q.shape[-1])
        if allowed is not None:
            s = s.masked_fill(~allowed[..., start:start + block], float("-inf"))
        new_best = torch.maximum(best, s.amax(dim=-1, keepdim=True))
        safe = torch.where(torch.isinf(new_best), torch.zeros_like(new_best), new_best)
        fix = torch.exp(best - safe)
        p = torch.exp(s - safe)
        total = total * fix + p.sum(dim=-1, keepdim=True)
        acc = acc * fix + p @ v
        best = new_best
    return torch.where(total > 0, acc / total, torch.zeros_like(acc)).to(Q.dtype)
