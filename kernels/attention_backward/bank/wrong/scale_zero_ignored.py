"""`scale = scale or 1/sqrt(d)`: an explicit scale=0.0 is falsy, so it is silently replaced by
the default 1/sqrt(d) in both the forward recompute and the dQ/dK scaling."""
import math

import torch


def attention_backward(Q, K, V, dO, mask=None, scale=None):
    scale = scale or 1 / math.sqrt(Q.shape[-1])
    work = torch.promote_types(Q.dtype, torch.float32)
    q, k, v, do = (t.to(work) for t in (Q, K, V, dO))
    scores = q @ k.transpose(-2, -1) * scale
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    p = torch.nan_to_num(torch.softmax(scores, dim=-1), nan=0.0)
    dv = p.transpose(-2, -1) @ do
    dp = do @ v.transpose(-2, -1)
    ds = p * (dp - (dp * p).sum(dim=-1, keepdim=True))
    dq = ds @ k * scale
    dk = ds.transpose(-2, -1) @ q * scale
    return dq.to(Q.dtype), dk.to(K.dtype), dv.to(V.dtype)
