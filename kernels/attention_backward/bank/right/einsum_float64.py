"""einsum in float64, cast back; the row term from O (D = rowsum(dO * O), as FlashAttention 2 does)."""
import torch


def attention_backward(Q, K, V, dO, mask=None, scale=None):
    q, k, v, do = Q.double(), K.double(), V.double(), dO.double()
    scale = q.shape[-1] ** -0.5 if scale is None else scale
    s = torch.einsum("...nd,...md->...nm", q, k) * scale
    if mask is not None:
        s = s.masked_fill(mask == 0, float("-inf"))
    row_max = s.amax(-1, keepdim=True)
    row_max = torch.where(torch.isinf(row_max), torch.zeros_like(row_max), row_max)
    e = torch.exp(s - row_max)
    total = e.sum(-1, keepdim=True)
    p = e / torch.where(total == 0, torch.ones_like(total), total)
    o = torch.einsum("...nm,...mv->...nv", p, v)
    d_row = (do * o).sum(-1, keepdim=True)
    ds = p * (torch.einsum("...nv,...mv->...nm", do, v) - d_row)
    dq = torch.einsum("...nm,...md->...nd", ds, k) * scale
    dk = torch.einsum("...nm,...nd->...md", ds, q) * scale
    dv = torch.einsum("...nm,...nv->...mv", p, do)
    return dq.to(Q.dtype), dk.to(K.dtype), dv.to(V.dtype)
