"""Flattens batch and heads with .view for bmm: fine on contiguous inputs, raises on views."""
import math

import torch


def gqa_attention(Q, K, V, mask=None):
    B, H, n, d = Q.shape
    H_kv, m, d_v = K.shape[1], K.shape[2], V.shape[3]
    q = Q.view(B * H, n, d)
    k = K.view(B * H_kv, m, d).repeat_interleave(H // H_kv, dim=0)
    v = V.view(B * H_kv, m, d_v).repeat_interleave(H // H_kv, dim=0)
    scores = torch.bmm(q, k.transpose(1, 2)) / math.sqrt(d)
    if mask is not None:
        scores = scores.masked_fill(~mask.expand(B, H, n, m).reshape(B * H, n, m), float("-inf"))
    return torch.bmm(torch.softmax(scores, dim=-1), v).view(B, H, n, d_v)
