"""One query row at a time, in float64, cast back at the end; zero rows with no allowed key."""
import math

import torch


def scaled_dot_product_attention(Q, K, V, mask=None):
    lead = torch.broadcast_shapes(Q.shape[:-2], K.shape[:-2], V.shape[:-2])
    n, m = Q.shape[-2], K.shape[-2]
    q = Q.double().expand(*lead, n, Q.shape[-1])
    k = K.double().expand(*lead, m, K.shape[-1])
    v = V.double().expand(*lead, m, V.shape[-1])
    allowed = None if mask is None else (mask != 0).expand(*lead, n, m)
    rows = []
    for i in range(n):
        s = (q[..., i:i + 1, :] @ k.transpose(-2, -1)) / math.sqrt(Q.shape[-1])
        if allowed is not None:
            s = s.masked_fill(~allowed[..., i:i + 1, :], float("-inf"))
        w = torch.softmax(s, dim=-1).nan_to_num(0.0)
        rows.append(w @ v)
    return torch.cat(rows, dim=-2).to(Q.dtype)
