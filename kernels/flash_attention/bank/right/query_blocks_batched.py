"""Every query block at once, as a GPU runs them in parallel: Q padded to whole blocks and
viewed as (*, blocks, block_q, d), one loop over key blocks, each step a batch of
(block_q, block_k) tiles; under causal only the query blocks that can see the key block take part."""
import math

import torch
import torch.nn.functional as F


def flash_attention(Q, K, V, block_q=64, block_k=64, causal=False):
    n, m, d_v = Q.shape[-2], K.shape[-2], V.shape[-1]
    lead, offset = Q.shape[:-2], m - n
    rows_per_block = min(block_q, n)
    blocks = -(-n // rows_per_block)
    work = torch.promote_types(Q.dtype, torch.float32)
    q = F.pad(Q.to(work), (0, 0, 0, blocks * rows_per_block - n)) / math.sqrt(Q.shape[-1])
    q = q.reshape(*lead, blocks, rows_per_block, Q.shape[-1])
    rows = torch.arange(blocks * rows_per_block, device=Q.device).reshape(blocks, rows_per_block, 1)
    best = torch.full((*lead, blocks, rows_per_block), float("-inf"), dtype=work, device=Q.device)
    total = torch.zeros_like(best)
    acc = torch.zeros((*lead, blocks, rows_per_block, d_v), dtype=work, device=Q.device)
    for ks in range(0, m, block_k):
        ke = min(ks + block_k, m)
        first = max(0, (ks - offset) // rows_per_block) if causal else 0  # blocks before it see none of these keys
        if first >= blocks:
            break
        k = K[..., ks:ke, :].to(work).unsqueeze(-3)
        s = q[..., first:, :, :] @ k.transpose(-2, -1)
        if causal:
            cols = torch.arange(ks, ke, device=Q.device)
            s = s.masked_fill(cols > rows[first:] + offset, float("-inf"))
        new = torch.maximum(best[..., first:, :], s.amax(-1))
        shift = torch.where(new == float("-inf"), 0.0, new)
        p = torch.exp(s - shift.unsqueeze(-1))
        alpha = torch.exp(best[..., first:, :] - shift)
        total[..., first:, :] = alpha * total[..., first:, :] + p.sum(-1)
        acc[..., first:, :, :] = alpha.unsqueeze(-1) * acc[..., first:, :, :] + p @ V[..., ks:ke, :].to(work).unsqueeze(-3)
        best[..., first:, :] = new
    total = total.reshape(*lead, -1)[..., :n]
    best = best.reshape(*lead, -1)[..., :n]
    acc = acc.reshape(*lead, -1, d_v)[..., :n, :]
    seen = total > 0
    out = torch.where(seen.unsqueeze(-1), acc / total.clamp_min(1e-30).unsqueeze(-1), 0.0)
    lse = torch.where(seen, best + torch.log(total), float("-inf"))
    return out.to(Q.dtype), lse
