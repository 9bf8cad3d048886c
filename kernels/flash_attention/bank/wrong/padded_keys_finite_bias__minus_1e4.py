"""Pads K and V with zero rows to a whole number of key blocks (every tile the same width, as
a GPU kernel likes it) and keeps the padded keys out of the softmax with an additive bias of
-10000 (BERT's old "extended attention mask" value, chosen because it fits float16). Causal
masking uses -inf and the online softmax is otherwise right.

Wrong because -1e4 is not -inf: a padded key gets the score 0 - 1e4, so when the real scores
of a row lie below about -1e4 (non-causal, m not a multiple of block_k) the padded zero
rows of V win the softmax: the output goes to about 0 and the lse to about -1e4 + log(pad).
(Under causal the padded keys are always past the diagonal, so -inf hides them.)
Shows on: Q = 0.3 randn + sqrt(1e5 / 2), K = 0.3 randn - sqrt(1e5 / 2) (scores near -1e5),
Q (4, 4), K and V (6, 4) float32, block_q = block_k = 4, causal=False: output off by ~1,
lse -9999 instead of ~-1e5.
"""
import math

import torch
import torch.nn.functional as F

PAD_BIAS = -10000.0  # "large enough", and safe in float16


def flash_attention(Q, K, V, block_q=64, block_k=64, causal=False):
    n, m, d_v = Q.shape[-2], K.shape[-2], V.shape[-1]
    lead, offset = Q.shape[:-2], m - n
    work = torch.promote_types(Q.dtype, torch.float32)
    bk = min(block_k, m)
    padded = -(-m // bk) * bk
    K_p = F.pad(K.to(work), (0, 0, 0, padded - m))
    V_p = F.pad(V.to(work), (0, 0, 0, padded - m))
    bias = torch.zeros(padded, dtype=work, device=Q.device)
    bias[m:] = PAD_BIAS
    scale = 1 / math.sqrt(Q.shape[-1])
    outs, lses = [], []
    for qs in range(0, n, block_q):
        qe = min(qs + block_q, n)
        q = Q[..., qs:qe, :].to(work) * scale
        rows = torch.arange(qs, qe, device=Q.device)
        best = torch.full((*lead, qe - qs), float("-inf"), dtype=work, device=Q.device)
        total = torch.zeros_like(best)
        acc = torch.zeros((*lead, qe - qs, d_v), dtype=work, device=Q.device)
        last = padded if not causal else min(padded, qe + offset)
        for ks in range(0, max(last, 0), bk):
            ke = ks + bk
            s = q @ K_p[..., ks:ke, :].transpose(-2, -1) + bias[ks:ke]
            if causal:
                cols = torch.arange(ks, ke, device=Q.device)
                s = s.masked_fill(cols[None, :] > rows[:, None] + offset, float("-inf"))
            new = torch.maximum(best, s.amax(-1))
            shift = torch.where(new == float("-inf"), 0.0, new)
            p = torch.exp(s - shift.unsqueeze(-1))
            alpha = torch.exp(best - shift)
            total = alpha * total + p.sum(-1)
            acc = alpha.unsqueeze(-1) * acc + p @ V_p[..., ks:ke, :]
            best = new
        seen = total > 0
        outs.append(torch.where(seen.unsqueeze(-1), acc / total.clamp_min(1e-30).unsqueeze(-1), 0.0))
        lses.append(torch.where(seen, best + torch.log(total), float("-inf")))
    return torch.cat(outs, -2).to(Q.dtype), torch.cat(lses, -1)
