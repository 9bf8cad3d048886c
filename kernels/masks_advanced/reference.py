"""Every mask is one comparison between int64 position vectors (and lengths)."""

import torch


def _lengths(lengths):
    return torch.as_tensor(lengths).reshape(-1).to(torch.int64)


def causal_mask(n_q, n_k):
    # The queries are the newest n_q positions: shift the diagonal right by n_k - n_q.
    return torch.ones(n_q, n_k, dtype=torch.bool).tril(diagonal=n_k - n_q)


def sliding_window_mask(n, window):
    positions = torch.arange(n)
    back = positions[:, None] - positions[None, :]  # how far key j lies behind query i
    return (back >= 0) & (back < window)


def causal_padding_mask(lengths, n):
    lengths = _lengths(lengths)
    keys = torch.arange(n, device=lengths.device)
    real_keys = keys[None, :] < lengths[:, None]  # (B, n)
    causal = keys[None, :] <= keys[:, None]  # (n, n)
    return (causal[None, :, :] & real_keys[:, None, :])[:, None, :, :]


def left_padding_mask(lengths, n):
    lengths = _lengths(lengths)
    keys = torch.arange(n, device=lengths.device)
    return (keys[None, :] >= n - lengths[:, None])[:, None, None, :]
