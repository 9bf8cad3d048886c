"""Gives every call a mask, so the backward has one path: without one it makes an all-True
`torch.ones(n, m, dtype=torch.bool)` and forgets device=. That mask lives on the default device,
so on a GPU every unmasked call (the usual case: encoder self-attention) raises in masked_fill.
The statement asks for every tensor on the inputs' device."""
import math

import torch


def attention_backward(Q, K, V, dO, mask=None, scale=None):
    n, m = Q.shape[-2], K.shape[-2]
    if scale is None:
        scale = 1 / math.sqrt(Q.shape[-1])
    if mask is None:
        mask = torch.ones(n, m, dtype=torch.bool)  # nothing blocked
    work = torch.promote_types(Q.dtype, torch.float32)
    q, k, v, do = (t.to(work) for t in (Q, K, V, dO))
    s = (q @ k.transpose(-2, -1) * scale).masked_fill(~mask, float("-inf"))
    p = torch.nan_to_num(torch.softmax(s, dim=-1), nan=0.0)
    dp = do @ v.transpose(-2, -1)
    ds = p * (dp - (dp * p).sum(dim=-1, keepdim=True))
    dq = ds @ k * scale
    dk = ds.transpose(-2, -1) @ q * scale
    dv = p.transpose(-2, -1) @ do
    return dq.to(Q.dtype), dk.to(K.dtype), dv.to(V.dtype)
