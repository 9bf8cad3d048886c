"""Blocks the padding QUERIES (rows) of the causal mask instead of the padding keys."""
import torch


def causal_mask(n_q, n_k):
    return torch.ones(n_q, n_k, dtype=torch.bool).tril(diagonal=n_k - n_q)


def sliding_window_mask(n, window):
    i = torch.arange(n)[:, None]
    j = torch.arange(n)[None, :]
    return (j <= i) & (i - j < window)


def causal_padding_mask(lengths, n):
    lengths = torch.as_tensor(lengths)
    pos = torch.arange(n)
    causal = torch.tril(torch.ones(n, n, dtype=torch.bool))
    real = pos[None, :] < lengths[:, None]  # (B, n)
    return (causal[None] & real[:, :, None])[:, None]


def left_padding_mask(lengths, n):
    lengths = torch.as_tensor(lengths)
    pos = torch.arange(n)
    return (pos[None, :] >= n - lengths[:, None])[:, None, None, :]
