"""Takes the scale from V's last dim."""
import math

import torch


def scaled_dot_product_attention(Q, K, V, mask=None):
    scores = torch.matmul(Q, K.transpose(-2, -1)) / math.sqrt(V.size(-1))
    if mask is not None:
        scores = scores.masked_fill(mask == 0, float("-inf"))
    return torch.matmul(torch.softmax(scores, dim=-1), V)
