"""Keys in chunks of 8 with a correct online softmax, but the mask columns never move on."""
import math

import torch


def scaled_dot_product_attention(Q, K, V, mask=None):
    lead = torch.broadcast_shapes(Q.shape[:-2], K.shape[:-2])
    n, m = Q.shape[-2], K.shape[-2]
    allowed = None if mask is None else torch.broadcast_to(mask != 0, (*lead, n, m))
    best = torch.full((*lead, n, 1), float("-inf"), dtype=torch.float64, device=Q.device)
    total = torch.zeros((*lead, n, 1), dtype=torch.float64, device=Q.device)
    acc = torch.zeros((*lead, n, V.shape[-1]), dtype=torch.float64, device=Q.device)
    for start in range(0, m, 8):
        k, v = K[..., start:start + 8, :].double(), V[..., start:start + 8, :].double()
        s = Q.double() @ k.transpose(-2, -1) / math.sqrt(Q.shape[-1])
        if allowed is not None:
            s = s.masked_fill(~allowed[..., :k.shape[-2]], float("-inf"))
        new_best = torch.maximum(best, s.amax(dim=-1, keepdim=True))
        safe = torch.nan_to_num(new_best, neginf=0.0)
        fix = torch.exp(best - safe)
        p = torch.exp(s - safe)
        total = total * fix + p.sum(dim=-1, keepdim=True)
        acc = acc * fix + p @ v
        best = new_best
    return (acc / total).to(Q.dtype)
