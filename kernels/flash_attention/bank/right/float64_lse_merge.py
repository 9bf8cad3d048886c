"""float64 throughout; each tile's softmax and log-sum-exp are merged into the running ones
(out = out * exp(lse_old - lse_new) + tile_out * exp(lse_tile - lse_new))."""
import math

import torch


def flash_attention(Q, K, V, block_q=64, block_k=64, causal=False):
    q, k, v = Q.double(), K.double(), V.double()
    n, m = q.shape[-2], k.shape[-2]
    scale = 1 / math.sqrt(q.shape[-1])
    out = torch.zeros(*q.shape[:-1], v.shape[-1], dtype=torch.float64, device=Q.device)
    lse = torch.full(q.shape[:-1], float("-inf"), dtype=torch.float64, device=Q.device)
    for i in range(0, n, block_q):
        j_stop = min(m, i + block_q + m - n) if causal else m
        o_i = out[..., i:i + block_q, :]
        lse_i = lse[..., i:i + block_q]
        for j in range(0, max(j_stop, 0), block_k):
            s = q[..., i:i + block_q, :] @ k[..., j:j + block_k, :].transpose(-2, -1) * scale
            if causal:
                rows = torch.arange(i, i + s.shape[-2], device=Q.device)[:, None]
                cols = torch.arange(j, j + s.shape[-1], device=Q.device)[None, :]
                s = s.masked_fill(cols > rows + m - n, float("-inf"))
            lse_tile = torch.logsumexp(s, dim=-1)
            p = torch.nan_to_num(torch.softmax(s, dim=-1))  # a row masked in this tile: 0, not NaN
            lse_new = torch.logaddexp(lse_i, lse_tile)
            keep = torch.where(torch.isinf(lse_new), 0.0, torch.exp(lse_i - lse_new))
            take = torch.where(torch.isinf(lse_new), 0.0, torch.exp(lse_tile - lse_new))
            o_i = o_i * keep[..., None] + (p @ v[..., j:j + block_k, :]) * take[..., None]
            lse_i = lse_new
        out[..., i:i + block_q, :] = o_i
        lse[..., i:i + block_q] = lse_i
    return out.to(Q.dtype), lse if Q.dtype == torch.float64 else lse.float()
