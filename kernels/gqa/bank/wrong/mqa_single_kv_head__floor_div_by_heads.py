"""Per-head loop that picks the KV head with h // num_heads: always KV head 0."""
import math

import torch


def gqa_attention(Q, K, V, mask=None):
    num_heads = Q.shape[1]
    outs = []
    for h in range(num_heads):
        kv = h // num_heads
        scores = Q[:, h:h + 1] @ K[:, kv:kv + 1].transpose(-2, -1) / math.sqrt(Q.shape[-1])
        if mask is not None:
            head_mask = mask[:, h:h + 1] if mask.dim() == 4 and mask.shape[1] > 1 else mask
            scores = scores.masked_fill(~head_mask, float("-inf"))
        outs.append(torch.softmax(scores, dim=-1) @ V[:, kv:kv + 1])
    return torch.cat(outs, dim=1)
