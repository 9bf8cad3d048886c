"""Plain Python loops over absolute positions: slow, but the contract read literally."""
import torch


def causal_mask(n_q, n_k):
    mask = torch.zeros(n_q, n_k, dtype=torch.bool)
    for i in range(n_q):
        position = i + n_k - n_q
        mask[i, : position + 1] = True
    return mask


def sliding_window_mask(n, window):
    mask = torch.zeros(n, n, dtype=torch.bool)
    for i in range(n):
        mask[i, max(0, i - window + 1): i + 1] = True
    return mask


def causal_padding_mask(lengths, n):
    lengths = [int(length) for length in lengths]
    mask = torch.zeros(len(lengths), 1, n, n, dtype=torch.bool)
    for b, length in enumerate(lengths):
        for i in range(n):
            mask[b, 0, i, : min(i + 1, length)] = True
    return mask


def left_padding_mask(lengths, n):
    lengths = [int(length) for length in lengths]
    mask = torch.zeros(len(lengths), 1, 1, n, dtype=torch.bool)
    for b, length in enumerate(lengths):
        mask[b, 0, 0, n - length:] = True
    return mask
