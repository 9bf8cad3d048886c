"""A GPT-style block_size buffer of 64, sliced to n."""
import torch

BLOCK_SIZE = 64
bias = torch.tril(torch.ones(BLOCK_SIZE, BLOCK_SIZE)).view(BLOCK_SIZE, BLOCK_SIZE)


def causal_mask(n):
    return bias[:n, :n].clone()
