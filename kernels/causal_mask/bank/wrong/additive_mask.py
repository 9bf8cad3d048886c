"""Returns the additive form used inside attention, not a 0/1 mask."""
import torch


def causal_mask(n):
    return torch.triu(torch.full((n, n), float("-inf")), diagonal=1)
