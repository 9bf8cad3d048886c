"""Marks the future (the blocked keys) instead of the allowed ones."""
import torch


def causal_mask(n_q, n_k):
    return torch.triu(torch.ones(n_q, n_k, dtype=torch.bool), diagonal=n_k - n_q + 1)


def sliding_window_mask(n, window):
    i = torch.arange(n)[:, None]
    j = torch.arange(n)[None, :]
    return (j <= i) & (i - j < window)


def causal_padding_mask(lengths, n):
    lengths = torch.as_tensor(lengths)
    pos = torch.arange(n)
    causal = pos[None, :] <= pos[:, None]
    keys = pos[None, :] < lengths[:, None]
    return (causal[None] & keys[:, None, :]).unsqueeze(1)


def left_padding_mask(lengths, n):
    lengths = torch.as_tensor(lengths)
    pos = torch.arange(n)
    return (pos[None, :] >= n - lengths[:, None])[:, None, None, :]
