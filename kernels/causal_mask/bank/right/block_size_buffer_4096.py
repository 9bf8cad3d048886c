"""A block_size buffer of 4096 (a Llama-2-style context length), sliced to n: right for every
n the statement allows (1 to 3000). Past 4096 the slice would stay (4096, 4096); a hunt found it
passing while the statement still said "a few thousand", which now names its bound.
"""
import torch

BLOCK_SIZE = 4096
bias = torch.tril(torch.ones(BLOCK_SIZE, BLOCK_SIZE, dtype=torch.bool))


def causal_mask(n):
    return bias[:n, :n].clone()
