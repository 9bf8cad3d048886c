"""Blocks the diagonal too: a token cannot see itself."""
import torch


def causal_mask(n):
    return torch.tril(torch.ones(n, n, dtype=torch.bool), diagonal=-1)
