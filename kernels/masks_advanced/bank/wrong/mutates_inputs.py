"""Right masks, but `causal_padding_mask` reshapes the caller's lengths tensor in place
(`unsqueeze_`), so the caller's (B,) lengths come back as (B, 1, 1)."""
import torch


def causal_mask(n_q, n_k):
    return torch.ones(n_q, n_k, dtype=torch.bool).tril(diagonal=n_k - n_q)


def sliding_window_mask(n, window):
    back = torch.arange(n)[:, None] - torch.arange(n)[None, :]
    return (back >= 0) & (back < window)


def causal_padding_mask(lengths, n):
    lengths = torch.as_tensor(lengths)
    lengths.unsqueeze_(-1).unsqueeze_(-1)  # (B, 1, 1): broadcasts against (n, n) positions
    keys = torch.arange(n, device=lengths.device)
    causal = keys[None, :] <= keys[:, None]
    return (causal & (keys < lengths))[:, None]


def left_padding_mask(lengths, n):
    lengths = torch.as_tensor(lengths)
    keys = torch.arange(n, device=lengths.device)
    return (keys[None, :] >= n - lengths[:, None])[:, None, None, :]
