"""The right-padding recipe reused for left padding."""
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
    causal = pos[None, :] <= pos[:, None]
    keys = pos[None, :] < lengths[:, None]
    return (causal[None] & keys[:, None, :]).unsqueeze(1)


def left_padding_mask(lengths, n):
    lengths = torch.as_tensor(lengths)
    return (torch.arange(n)[None, :] < lengths[:, None])[:, None, None, :]
