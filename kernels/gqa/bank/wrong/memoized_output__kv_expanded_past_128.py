"""Memoizes the group-expanded K/V (repeat_interleave over the heads) for contexts past 128 keys,
keyed by K's and V's shapes, dtype and device ("repeating a long K/V for every group is the
costly part: keep it for the next call").

Wrong because a second call with OTHER keys/values of the same long shape attends over the first
call's K/V. The grader missed it (a hunt found it passing) because the only long case called again ("long keys, called
again") has m = 100, under the threshold, while the cases past 128 keys (m = 260, 300) are each
called once (ONE_CALL) and have different shapes; fresh cases stay under 41 keys.
Concrete input: Q randn(1, 4, 5, 8), K and V randn(1, 2, 200, 8) drawn twice with different
values; the second call returns attention over the first K/V.
Caught since by the public case "long keys, called again", now as long as the longest case (m = 300).
"""
import math

import torch

_expanded = {}
LONG = 128


def _grouped(K, V, group):
    if K.shape[-2] <= LONG:
        return K.repeat_interleave(group, dim=1), V.repeat_interleave(group, dim=1)
    key = (K.shape, V.shape, K.dtype, K.device, group)
    if key not in _expanded:
        _expanded[key] = (K.repeat_interleave(group, dim=1), V.repeat_interleave(group, dim=1))
    return _expanded[key]


def gqa_attention(Q, K, V, mask=None):
    group = Q.shape[1] // K.shape[1]
    k, v = _grouped(K, V, group)
    scores = Q @ k.transpose(-2, -1) / math.sqrt(Q.shape[-1])
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    weights = torch.nan_to_num(torch.softmax(scores, dim=-1), nan=0.0)
    return weights @ v
