"""Queries in chunks of 16, but every chunk reads the mask rows of the first chunk."""
import math

import torch


def scaled_dot_product_attention(Q, K, V, mask=None, chunk=16):
    pieces = []
    for start in range(0, Q.shape[-2], chunk):
        q = Q[..., start:start + chunk, :]
        scores = q @ K.transpose(-2, -1) / math.sqrt(Q.shape[-1])
        if mask is not None:
            rows = mask[..., :q.shape[-2], :] if mask.shape[-2] > 1 else mask
            scores = scores.masked_fill(rows == 0, float("-inf"))
        pieces.append(torch.softmax(scores, dim=-1) @ V)
    return torch.cat(pieces, dim=-2)
