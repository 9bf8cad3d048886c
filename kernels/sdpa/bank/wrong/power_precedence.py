"""`d_k ** 1/2` reads as (d_k ** 1) / 2: the scores are divided by d_k/2... twice over."""
import torch


def scaled_dot_product_attention(Q, K, V, mask=None):
    d_k = Q.shape[-1]
    scores = Q @ K.transpose(-2, -1) / d_k ** 1/2
    if mask is not None:
        scores = scores.masked_fill(mask == 0, float("-inf"))
    return torch.softmax(scores, dim=-1) @ V
