"""Attention backward by hand: dQ, dK, dV from dO."""
import torch


def attention_backward(Q, K, V, dO, mask=None, scale=None):
    """Return (dQ, dK, dV) for O = softmax(scale * Q K^T, masked) V, without autograd.

    Q (*, n, d), K (*, m, d), V (*, m, d_v), dO (*, n, d_v); mask (optional) bool, True = may
    attend, broadcasting to (*, n, m); scale None means 1 / sqrt(d). Rows whose keys are all
    blocked have output 0, so their dQ row is 0 and they add nothing to dK and dV.
    """
    raise NotImplementedError
