"""A GPT-2-style block_size buffer of 1024, sliced to n: wrong for n > 1024."""
import torch

BLOCK_SIZE = 1024
bias = torch.tril(torch.ones(BLOCK_SIZE, BLOCK_SIZE, dtype=torch.bool))


def causal_mask(n):
    return bias[:n, :n].clone()
