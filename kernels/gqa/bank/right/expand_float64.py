"""repeat_kv as Llama writes it (a group dim expanded, then merged), computed in float64."""
import math

import torch


def repeat_kv(x, groups):
    B, H_kv, m, d = x.shape
    return x[:, :, None].expand(B, H_kv, groups, m, d).reshape(B, H_kv * groups, m, d)


def gqa_attention(Q, K, V, mask=None):
    groups = Q.shape[1] // K.shape[1]
    q, k, v = (t.double() for t in (Q, repeat_kv(K, groups), repeat_kv(V, groups)))
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    scores = scores - scores.amax(dim=-1, keepdim=True).clamp_min(-1e300)
    exps = scores.exp()
    weights = exps / exps.sum(dim=-1, keepdim=True).clamp_min(1e-300)
    return (weights @ v).to(Q.dtype)
