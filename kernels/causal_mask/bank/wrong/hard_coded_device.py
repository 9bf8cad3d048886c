"""Always builds the mask on the CPU."""
import torch


def causal_mask(n):
    return torch.ones(n, n, dtype=torch.bool, device="cpu").tril()
