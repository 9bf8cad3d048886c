"""K and V never copied: Q viewed as (B, H_kv, G, n, d), the mask given the group dim."""
import torch


def gqa_attention(Q, K, V, mask=None):
    B, H, n, d = Q.shape
    H_kv, m = K.shape[1], K.shape[2]
    G = H // H_kv
    q = Q.reshape(B, H_kv, G, n, d)
    scores = torch.einsum("bkgnd,bkmd->bkgnm", q, K) * d ** -0.5
    if mask is not None:
        full = mask.expand(B, H, n, m).reshape(B, H_kv, G, n, m)
        scores = scores.masked_fill(~full, torch.finfo(scores.dtype).min)
    weights = scores.softmax(dim=-1)
    if mask is not None:
        weights = weights * full.any(dim=-1, keepdim=True)  # no allowed key: zeros
    out = torch.einsum("bkgnm,bkmv->bkgnv", weights, V)
    return out.reshape(B, H, n, V.shape[-1]), weights.reshape(B, H, n, m)
