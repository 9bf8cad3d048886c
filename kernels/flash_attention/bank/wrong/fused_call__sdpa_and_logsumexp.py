"""Lets PyTorch's fused kernel do the attention and adds the log-sum-exp on the side."""
import math

import torch
import torch.nn.functional as F


def flash_attention(Q, K, V, block_q=64, block_k=64, causal=False):
    n, m = Q.shape[-2], K.shape[-2]
    mask = torch.ones(n, m, dtype=torch.bool, device=Q.device).tril(diagonal=m - n) if causal else None
    out = F.scaled_dot_product_attention(Q, K, V, attn_mask=mask)
    scores = Q @ K.transpose(-2, -1) / math.sqrt(Q.shape[-1])
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    return out, torch.logsumexp(scores, dim=-1).to(torch.promote_types(Q.dtype, torch.float32))
