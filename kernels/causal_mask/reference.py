"""A causal mask: query i may attend to key j exactly when j <= i (itself and the past)."""

import torch


def causal_mask(n):
    return torch.ones(n, n, dtype=torch.bool).tril()
