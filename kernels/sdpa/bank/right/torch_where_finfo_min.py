"""torch.where with the dtype's most negative value instead of -inf."""
import math

import torch


def scaled_dot_product_attention(Q, K, V, mask=None):
    scores = torch.matmul(Q, K.mT) / math.sqrt(K.shape[-1])
    if mask is not None:
        blocked = torch.full_like(scores, torch.finfo(scores.dtype).min)
        scores = torch.where(mask.bool(), scores, blocked)
    return torch.matmul(torch.softmax(scores, dim=-1), V)
