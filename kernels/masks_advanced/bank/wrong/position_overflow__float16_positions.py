"""Builds causal_mask's positions in float16 ("the mask meets float16 scores anyway").

Wrong because float16 holds whole numbers exactly only up to 2048: past it, positions round to
even numbers, so query and key positions collide or cross and keys the query may see are
blocked (or later keys allowed). The statement says n_k of causal_mask reaches a few thousand (a
long context's cache). The grader missed it (a hunt found it passing) because its longest causal_mask case is
(n_q=3, n_k=2049), whose positions 0..2048 are all exact in float16; no case goes past 2049.
Concrete input: causal_mask(3000, 3000) (or (4, 3000): query 2996 is allowed key 2997).
Caught since by the public causal_mask case (1000, 3000).
"""
import torch


def causal_mask(n_q, n_k):
    k = torch.arange(n_k, dtype=torch.float16)
    q = torch.arange(n_k - n_q, n_k, dtype=torch.float16)
    return k[None, :] <= q[:, None]


def sliding_window_mask(n, window):
    i = torch.arange(n)[:, None]
    j = torch.arange(n)[None, :]
    return (j <= i) & (i - j < window)


def causal_padding_mask(lengths, n):
    lengths = torch.as_tensor(lengths)
    pos = torch.arange(n, device=lengths.device)
    causal = pos[None, :] <= pos[:, None]
    keys = pos[None, :] < lengths[:, None]
    return (causal[None] & keys[:, None, :]).unsqueeze(1)


def left_padding_mask(lengths, n):
    lengths = torch.as_tensor(lengths)
    pos = torch.arange(n, device=lengths.device)
    return (pos[None, :] >= n - lengths[:, None])[:, None, None, :]
