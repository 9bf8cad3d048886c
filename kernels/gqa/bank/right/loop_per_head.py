"""One query head at a time, reading KV head h // G; output only."""
import math

import torch


def gqa_attention(Q, K, V, mask=None):
    B, H, n, d = Q.shape
    H_kv = K.shape[1]
    G = H // H_kv
    outputs = []
    for h in range(H):
        kv = h // G
        scores = Q[:, h] @ K[:, kv].transpose(-2, -1) / math.sqrt(d)  # (B, n, m)
        if mask is not None:
            head_mask = mask.expand(B, H, n, K.shape[2])[:, h] if mask.dim() == 4 else mask
            scores = scores.masked_fill(~head_mask, float("-inf"))
        weights = torch.softmax(scores, dim=-1)
        outputs.append(weights @ V[:, kv])
    return torch.stack(outputs, dim=1)
