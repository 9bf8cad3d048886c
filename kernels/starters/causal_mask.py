"""Drill: causal mask.

Write `causal_mask(n)`: an (n, n) tensor (bool, or int/float 0/1) that is True/1 where key
j <= query i (a position sees itself and the past) and False/0 where j > i, on the default
device. It is used as `scores.masked_fill(mask == 0, float('-inf'))`.

Grade it with: studyapp grade causal_mask <this file>
"""

import torch


def causal_mask(n):
    raise NotImplementedError("build the (n, n) causal mask here")
