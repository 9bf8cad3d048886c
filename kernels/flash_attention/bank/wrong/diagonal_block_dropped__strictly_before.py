"""Keeps only key blocks that start before the query block (off by one block)."""
import math

import torch


def flash_attention(Q, K, V, block_q=64, block_k=64, causal=False):
    n, m = Q.shape[-2], K.shape[-2]
    scale = 1 / math.sqrt(Q.shape[-1])
    offset = m - n
    lead = Q.shape[:-2]
    outs, lses = [], []
    for qs in range(0, n, block_q):
        qe = min(qs + block_q, n)
        q = Q[..., qs:qe, :]
        m_i = torch.full((*lead, qe - qs), float("-inf"), dtype=Q.dtype, device=Q.device)
        l_i = torch.zeros(*lead, qe - qs, dtype=Q.dtype, device=Q.device)
        o_i = torch.zeros(*lead, qe - qs, V.shape[-1], dtype=Q.dtype, device=Q.device)
        for ks in range(0, m, block_k):
            ke = min(ks + block_k, m)
            if causal and ks >= qs + offset:
                break
            s = q @ K[..., ks:ke, :].transpose(-2, -1) * scale
            if causal:
                keys = torch.arange(ks, ke, device=Q.device)
                queries = torch.arange(qs, qe, device=Q.device)
                s = s.masked_fill(keys[None, :] > queries[:, None] + offset, float("-inf"))
            m_new = torch.maximum(m_i, s.amax(dim=-1))
            m_safe = torch.where(m_new == float("-inf"), torch.zeros_like(m_new), m_new)
            p = torch.exp(s - m_safe[..., None])
            alpha = torch.exp(m_i - m_safe)
            l_i = alpha * l_i + p.sum(dim=-1)
            o_i = alpha[..., None] * o_i + p @ V[..., ks:ke, :]
            m_i = m_new
        outs.append(torch.where(l_i[..., None] > 0, o_i / l_i[..., None], torch.zeros_like(o_i)))
        lses.append(m_i + torch.log(l_i))
    lse = torch.cat(lses, dim=-1) if lses else Q.new_zeros(*lead, 0)
    return torch.cat(outs, dim=-2), lse.to(torch.promote_types(Q.dtype, torch.float32))
