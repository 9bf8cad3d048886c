"""Masks, second level: four builders in one file (see the statement for the exact contract).

Every mask is True/1 where the query (row) may attend to the key (last dim).
"""

import torch


def causal_mask(n_q, n_k):
    """(n_q, n_k): the n_q queries are the LAST n_q of n_k positions (aligned bottom-right)."""
    raise NotImplementedError


def sliding_window_mask(n, window):
    """(n, n): causal, and query i sees key j only when 0 <= i - j < window (itself included)."""
    raise NotImplementedError


def causal_padding_mask(lengths, n):
    """(B, 1, n, n): causal AND key j < lengths[b] (right padding); every row is graded."""
    raise NotImplementedError


def left_padding_mask(lengths, n):
    """(B, 1, 1, n): key j is real iff j >= n - lengths[b] (left padding: real tokens last)."""
    raise NotImplementedError
