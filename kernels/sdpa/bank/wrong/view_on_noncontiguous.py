"""Flattens the leading dims with .view, which needs contiguous inputs."""
import math

import torch


def scaled_dot_product_attention(Q, K, V, mask=None):
    lead = torch.broadcast_shapes(Q.shape[:-2], K.shape[:-2])
    n, m = Q.shape[-2], K.shape[-2]
    q = Q.expand(*lead, n, Q.shape[-1]).view(-1, n, Q.shape[-1])
    k = K.expand(*lead, m, K.shape[-1]).view(-1, m, K.shape[-1])
    v = V.expand(*lead, m, V.shape[-1]).view(-1, m, V.shape[-1])
    scores = torch.bmm(q, k.transpose(1, 2)) / math.sqrt(q.shape[-1])
    if mask is not None:
        scores = scores.masked_fill(mask.expand(*lead, n, m).reshape(-1, n, m) == 0, float("-inf"))
    return torch.bmm(torch.softmax(scores, dim=-1), v).view(*lead, n, V.shape[-1])
