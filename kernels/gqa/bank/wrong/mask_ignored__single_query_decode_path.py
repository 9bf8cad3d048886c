"""A decode fast path for one query (n == 1): each KV head's G query heads are folded into one
(G, d) block and attend to K/V without copying them (what decoding kernels do), but the path
drops the mask: "a single new token may attend to every cached key, there is no future to
hide". The mask is not only causal: a padding mask (batched generation with padded prompts)
or any other blocked key still applies to one query.

Right on every case with n > 1 and on the public decode case (which has no mask). Wrong on
n == 1 with a mask: Q (2, 8, 1, 8), K and V (2, 4, 7, 8) float64, padding mask (2, 1, 1, 7)
with lengths [7, 3]: item 1 attends to its 4 padding keys (output off by 1.26 there).
"""
import math

import torch


def gqa_attention(Q, K, V, mask=None):
    batch, heads, n, d = Q.shape
    kv_heads = K.shape[1]
    group = heads // kv_heads
    if n == 1:  # decoding: every cached key is in the past
        q = Q.reshape(batch, kv_heads, group, d)  # query heads of KV head j: j*G .. j*G+G-1
        weights = torch.softmax(q @ K.transpose(-2, -1) / math.sqrt(d), dim=-1)  # (B, H_kv, G, m)
        return (weights @ V).reshape(batch, heads, 1, V.shape[-1])
    K = K.repeat_interleave(group, dim=1)
    V = V.repeat_interleave(group, dim=1)
    scores = Q @ K.transpose(-2, -1) / math.sqrt(d)
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    weights = torch.nan_to_num(torch.softmax(scores, dim=-1), nan=0.0)
    return weights @ V
