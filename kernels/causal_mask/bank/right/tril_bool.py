"""Reference: a lower-triangular bool matrix."""
import torch


def causal_mask(n):
    return torch.tril(torch.ones(n, n, dtype=torch.bool))
