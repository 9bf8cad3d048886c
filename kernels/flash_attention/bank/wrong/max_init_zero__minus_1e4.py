"""Starts the running max at -1e4 (a "very negative" stand-in for -inf that even fits float16)
so a row that sees no key never computes -inf - (-inf).

Wrong because -1e4 is not -inf: the running max never drops below it, so a row whose scores
all lie below about -1e4 - 100 has every exp(score - (-1e4)) underflow to 0, and gets output
0 and lse -inf instead of its softmax. The contract defines the output for any scores.
The grader missed it (a hunt found it passing) because its most negative case ("very negative scores", and the
+-100 "large" ones) only puts scores near -1000, far above -1e4; a start at 0 fails there,
one at -1e4 does not.
Shows on: Q = 100 + randn, K = -100 + randn, V randn, all (1, 8, 4) float32 (scores near
-2e4), block_q = block_k = 4, causal=False (see /tmp/hunt-ga/flash_minus_1e4.py).
Caught since by the public case "scores near -1e5, a batch of one".
"""
import math

import torch

NEG_BIG = -1e4  # fits in float16, and exp(NEG_BIG - anything real) is 0 anyway


def flash_attention(Q, K, V, block_q=64, block_k=64, causal=False):
    n, m = Q.shape[-2], K.shape[-2]
    scale = 1 / math.sqrt(Q.shape[-1])
    offset = m - n
    lead = Q.shape[:-2]
    work = torch.promote_types(Q.dtype, torch.float32)
    outs, lses = [], []
    for qs in range(0, n, block_q):
        qe = min(qs + block_q, n)
        q = Q[..., qs:qe, :].to(work) * scale
        m_i = torch.full((*lead, qe - qs), NEG_BIG, dtype=work, device=Q.device)
        l_i = torch.zeros_like(m_i)
        o_i = torch.zeros((*lead, qe - qs, V.shape[-1]), dtype=work, device=Q.device)
        for ks in range(0, m, block_k):
            if causal and ks > qe - 1 + offset:
                break
            ke = min(ks + block_k, m)
            s = q @ K[..., ks:ke, :].to(work).transpose(-2, -1)
            if causal:
                keys = torch.arange(ks, ke, device=Q.device)
                queries = torch.arange(qs, qe, device=Q.device)
                s = s.masked_fill(keys[None, :] > queries[:, None] + offset, float("-inf"))
            m_new = torch.maximum(m_i, s.amax(dim=-1))  # never -inf: no NaN below
            p = torch.exp(s - m_new[..., None])
            alpha = torch.exp(m_i - m_new)
            l_i = alpha * l_i + p.sum(dim=-1)
            o_i = alpha[..., None] * o_i + p @ V[..., ks:ke, :].to(work)
            m_i = m_new
        seen = l_i > 0
        outs.append(torch.where(seen[..., None], o_i / l_i.clamp_min(1e-30)[..., None], 0.0).to(Q.dtype))
        lses.append(torch.where(seen, m_i + torch.log(l_i.clamp_min(1e-30)), float("-inf")))
    return torch.cat(outs, dim=-2), torch.cat(lses, dim=-1)
