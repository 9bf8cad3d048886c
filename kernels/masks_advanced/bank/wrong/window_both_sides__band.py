"""A symmetric band: local, but no longer causal."""
import torch


def causal_mask(n_q, n_k):
    return torch.ones(n_q, n_k, dtype=torch.bool).tril(diagonal=n_k - n_q)


def sliding_window_mask(n, window):
    pos = torch.arange(n)
    return (pos[:, None] - pos[None, :]).abs() < window


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
