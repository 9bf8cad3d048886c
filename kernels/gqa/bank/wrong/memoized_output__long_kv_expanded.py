"""Wrong because the group-expanded K/V (repeat_interleave over the heads) are memoized for long
contexts keyed only by K's and V's shapes, dtype and device: a second call with OTHER keys/values
of the same long shape attends over the first call's K/V. E.g. K, V (1, 2, 100, 8) drawn twice
with different values (Q (1, 4, 5, 8)): the second call returns the first K/V's attention.

The grader missed it (a hunt found it passing) because every case longer than 64 (BIG) is called only once (ONE_CALL) and
the long public cases all have different shapes; the small cases called again on other inputs
never reach the memo.
Caught since by the public case "long keys, called again".
"""
import math

import torch

_expanded = {}
LONG = 64  # repeating a long K/V for every group is the costly part: keep it for the next call


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
