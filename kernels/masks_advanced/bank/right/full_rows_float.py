"""Float 0./1. masks, the left padding mask materialised to (B, 1, n, n) with identical rows; the
masks built from `lengths` make their positions on its device (a list's is the default one)."""
import torch


def causal_mask(n_q, n_k):
    q = torch.arange(n_k - n_q, n_k, dtype=torch.int32)
    k = torch.arange(n_k, dtype=torch.int32)
    return (k.unsqueeze(0) <= q.unsqueeze(1)).float().reshape(1, 1, n_q, n_k)


def sliding_window_mask(n, window):
    back = torch.arange(n).unsqueeze(1) - torch.arange(n).unsqueeze(0)
    return torch.where((back >= 0) & (back < window), 1.0, 0.0)


def causal_padding_mask(lengths, n):
    lengths = torch.as_tensor(lengths, dtype=torch.int64)
    pos = torch.arange(n, device=lengths.device)
    allowed = (pos.view(1, 1, 1, n) <= pos.view(1, 1, n, 1)) & (pos.view(1, 1, 1, n) < lengths.view(-1, 1, 1, 1))
    return allowed.float()


def left_padding_mask(lengths, n):
    lengths = torch.as_tensor(lengths, dtype=torch.int64)
    start = (n - lengths).view(-1, 1, 1, 1)
    keys = torch.arange(n, device=lengths.device).view(1, 1, 1, n) >= start
    return keys.expand(-1, 1, n, n).float()
