"""One 2-D problem at a time: flatten the leading dims and loop; fully masked rows handled by a
mask-aware softmax (zeros where no key is allowed)."""
import math

import torch


def attention_backward(Q, K, V, dO, mask=None, scale=None):
    n, m, d, dv_dim = Q.shape[-2], K.shape[-2], Q.shape[-1], V.shape[-1]
    lead = Q.shape[:-2]
    scale = 1 / math.sqrt(d) if scale is None else scale
    allowed = torch.ones(n, m, dtype=torch.bool, device=Q.device) if mask is None else mask
    allowed = allowed.expand(*lead, n, m).reshape(-1, n, m)
    q, k, v, do = Q.reshape(-1, n, d), K.reshape(-1, m, d), V.reshape(-1, m, dv_dim), dO.reshape(-1, n, dv_dim)
    dq, dk, dv = torch.zeros_like(q), torch.zeros_like(k), torch.zeros_like(v)
    for b in range(q.shape[0]):
        s = (q[b] @ k[b].T) * scale
        s = torch.where(allowed[b], s, torch.finfo(s.dtype).min)
        e = torch.exp(s - s.max(dim=1, keepdim=True).values) * allowed[b]
        total = e.sum(dim=1, keepdim=True)
        p = e / total.clamp_min(torch.finfo(s.dtype).tiny)
        dv[b] = p.T @ do[b]
        dp = do[b] @ v[b].T
        ds = p * (dp - (dp * p).sum(dim=1, keepdim=True))
        dq[b] = ds @ k[b] * scale
        dk[b] = ds.T @ q[b] * scale
    return dq.reshape(Q.shape), dk.reshape(K.shape), dv.reshape(V.shape)
