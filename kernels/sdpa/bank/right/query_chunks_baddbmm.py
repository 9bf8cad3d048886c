"""Queries in chunks of 37 with the mask rows offset to match; scores via baddbmm."""
import math

import torch


def scaled_dot_product_attention(Q, K, V, mask=None, chunk=37):
    lead = torch.broadcast_shapes(Q.shape[:-2], K.shape[:-2])
    n, m, d_k, d_v = Q.shape[-2], K.shape[-2], Q.shape[-1], V.shape[-1]
    q = Q.expand(*lead, n, d_k).reshape(-1, n, d_k)
    k = K.expand(*lead, m, d_k).reshape(-1, m, d_k)
    v = V.expand(*lead, m, d_v).reshape(-1, m, d_v)
    allowed = None if mask is None else (mask != 0).expand(*lead, n, m).reshape(-1, n, m)
    out = []
    for start in range(0, n, chunk):
        rows = q[:, start:start + chunk]
        zero = torch.zeros(rows.shape[0], rows.shape[1], m, dtype=Q.dtype, device=Q.device)
        s = torch.baddbmm(zero, rows, k.transpose(1, 2), alpha=1 / math.sqrt(d_k))
        if allowed is not None:
            s = s.masked_fill(~allowed[:, start:start + chunk], float("-inf"))
        out.append(torch.bmm(torch.softmax(s, dim=-1), v))
    return torch.cat(out, dim=1).reshape(*lead, n, d_v)
