"""einsum for both products; returns (output, weights)."""
import torch


def scaled_dot_product_attention(Q, K, V, mask=None):
    scores = torch.einsum("...nd,...md->...nm", Q, K) * Q.shape[-1] ** -0.5
    if mask is not None:
        scores = scores.masked_fill(mask == 0, float("-inf"))
    weights = scores.softmax(dim=-1)
    return torch.einsum("...nm,...mv->...nv", weights, V), weights
