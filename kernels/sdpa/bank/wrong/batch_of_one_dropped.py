"""Unbatched inputs are given a batch dim (unsqueeze(0)) so one 3-D code path serves all, and
the output is squeezed back with `.squeeze(0)` whatever came in.

Wrong because a batch of ONE, Q (1, n, d_k) (or (1, h, n, d_k)), which the statement allows
("zero to two leading dims"), loses its batch dim: the output is (n, d_v) instead of
(1, n, d_v). The grader missed it (a hunt found it passing) because no case, public or fresh, has a leading dim of size 1
(public ones use 2, 3 and 4; fresh ones draw (), (2,) or (2, 3)).
Concrete input: Q, K, V randn(1, 4, 8), no mask.
Caught since by the public case "a batch of one" (mistake batch_of_one_dropped).
"""
import math

import torch


def scaled_dot_product_attention(Q, K, V, mask=None):
    unbatched = Q.dim() == 2
    if unbatched:
        Q, K, V = Q.unsqueeze(0), K.unsqueeze(0), V.unsqueeze(0)
    scores = Q @ K.transpose(-2, -1) / math.sqrt(Q.shape[-1])
    if mask is not None:
        scores = scores.masked_fill(mask == 0, float("-inf"))
    weights = torch.nan_to_num(torch.softmax(scores, dim=-1))
    return (weights @ V).squeeze(0)
