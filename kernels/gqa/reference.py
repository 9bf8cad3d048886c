"""Grouped-query attention: give every query head its KV head (h // G), then attend per head."""

import math

import torch


def gqa_attention(Q, K, V, mask=None):
    heads, kv_heads = Q.shape[1], K.shape[1]
    if heads % kv_heads:
        raise ValueError(f"{kv_heads} KV heads cannot be shared evenly by {heads} query heads")
    group = heads // kv_heads
    K = K.repeat_interleave(group, dim=1)  # (B, H, m, d): heads 0..G-1 get KV head 0, ...
    V = V.repeat_interleave(group, dim=1)
    scores = Q @ K.transpose(-2, -1) / math.sqrt(Q.shape[-1])
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    weights = torch.softmax(scores, dim=-1)
    weights = torch.nan_to_num(weights, nan=0.0)  # a query with no allowed key attends to nothing
    return weights @ V, weights
