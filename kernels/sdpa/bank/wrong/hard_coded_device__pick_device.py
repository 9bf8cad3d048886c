"""Picks its own device instead of following the inputs."""
import math

import torch

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"


def scaled_dot_product_attention(Q, K, V, mask=None):
    Q, K, V = Q.to(DEVICE), K.to(DEVICE), V.to(DEVICE)
    scores = Q @ K.transpose(-2, -1) / math.sqrt(Q.shape[-1])
    if mask is not None:
        scores = scores.masked_fill(mask.to(DEVICE) == 0, float("-inf"))
    return torch.softmax(scores, dim=-1) @ V
