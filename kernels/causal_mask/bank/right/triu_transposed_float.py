"""The upper triangle transposed, as float 0/1."""
import torch


def causal_mask(n):
    return torch.ones(n, n).triu().T.contiguous()
