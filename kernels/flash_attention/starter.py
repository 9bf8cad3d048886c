"""Tiled online-softmax attention forward (the FlashAttention algorithm)."""
import torch


def flash_attention(Q, K, V, block_q=64, block_k=64, causal=False):
    """Return (output, lse) of softmax(Q K^T / sqrt(d)) V, computed block by block.

    Q (*, n, d), K (*, m, d), V (*, m, d_v). Loop over query blocks of `block_q` rows and, inside,
    over key blocks of `block_k` keys, keeping per query a running max, a running sum of
    exponentials and a running output; never build the (n, m) score matrix.
    causal: query i may see key j when j <= i + (m - n) (aligned bottom-right); skip key blocks
    no query of the block can see. Rows that see no key: output 0, lse -inf.
    Returns output (*, n, d_v) in Q's dtype and lse (*, n) = log sum_j exp(score_ij), in float32
    (float64 for float64 inputs).
    """
    raise NotImplementedError
