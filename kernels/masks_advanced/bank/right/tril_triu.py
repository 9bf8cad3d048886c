"""torch.tril / torch.triu with diagonal offsets, and int 0/1 masks."""
import torch


def causal_mask(n_q, n_k):
    return torch.tril(torch.ones(n_q, n_k, dtype=torch.int64), diagonal=n_k - n_q)


def sliding_window_mask(n, window):
    ones = torch.ones(n, n, dtype=torch.int64)
    return torch.tril(ones) * torch.triu(ones, diagonal=-(window - 1))


def causal_padding_mask(lengths, n):
    if not isinstance(lengths, torch.Tensor):
        lengths = torch.tensor(lengths)
    keys = (torch.arange(n, device=lengths.device) < lengths.long().unsqueeze(-1)).long()
    causal = torch.tril(torch.ones(n, n, dtype=torch.int64, device=lengths.device))
    return causal.unsqueeze(0).unsqueeze(0) * keys.view(-1, 1, 1, n)


def left_padding_mask(lengths, n):
    if not isinstance(lengths, torch.Tensor):
        lengths = torch.tensor(lengths)
    # flip a right-padding mask: the real tokens move to the end of each row
    right = torch.arange(n, device=lengths.device) < lengths.long().unsqueeze(-1)
    return right.flip(-1).view(-1, 1, 1, n)
