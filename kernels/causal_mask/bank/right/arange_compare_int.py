"""Compares positions with broadcasting; an int 0/1 mask."""
import torch


def causal_mask(n):
    positions = torch.arange(n)
    return (positions[None, :] <= positions[:, None]).long()
