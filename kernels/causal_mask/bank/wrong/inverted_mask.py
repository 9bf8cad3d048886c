"""Uses triu: lets each query see the future."""
import torch


def causal_mask(n):
    return torch.triu(torch.ones(n, n))
