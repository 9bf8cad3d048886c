"""All the queries at once against each key block (meant as "every query block in parallel",
but block_q is never used): right values, tiles block_k keys wide, but all n queries tall.
Under causal only the queries that can see the key block take part."""
import math

import torch


def flash_attention(Q, K, V, block_q=64, block_k=64, causal=False):
    n, m, d_v = Q.shape[-2], K.shape[-2], V.shape[-1]
    lead = Q.shape[:-2]
    q = Q * (1.0 / math.sqrt(Q.shape[-1]))
    m_run = Q.new_full((*lead, n), float("-inf"))
    l_run = Q.new_zeros((*lead, n))
    acc = Q.new_zeros((*lead, n, d_v))
    for ks in range(0, m, block_k):
        ke = min(ks + block_k, m)
        first = max(0, ks - (m - n)) if causal else 0  # queries before it see no key of this block
        if first >= n:
            break
        s = q[..., first:, :] @ K[..., ks:ke, :].transpose(-2, -1)
        if causal:
            rows = torch.arange(first, n, device=Q.device)[:, None]
            cols = torch.arange(ks, ke, device=Q.device)[None, :]
            s = s.masked_fill(cols > rows + (m - n), float("-inf"))
        new = torch.maximum(m_run[..., first:], s.amax(-1))
        shift = torch.where(torch.isinf(new), torch.zeros_like(new), new)
        p = (s - shift[..., None]).exp()
        alpha = (m_run[..., first:] - shift).exp()
        l_run = torch.cat([l_run[..., :first], alpha * l_run[..., first:] + p.sum(-1)], dim=-1)
        acc = torch.cat([acc[..., :first, :], alpha[..., None] * acc[..., first:, :] + p @ V[..., ks:ke, :]], dim=-2)
        m_run = torch.cat([m_run[..., :first], new], dim=-1)
    empty = l_run == 0
    out = acc / torch.where(empty, torch.ones_like(l_run), l_run)[..., None]
    lse = torch.where(empty, torch.full_like(l_run, float("-inf")), m_run + l_run.log())
    return out, lse.to(torch.promote_types(Q.dtype, torch.float32))
