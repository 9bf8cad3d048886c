"""Positions as uint8 to save memory: they wrap at 256."""
import torch


def causal_mask(n):
    positions = torch.arange(n).to(torch.uint8)
    return positions[None, :] <= positions[:, None]
