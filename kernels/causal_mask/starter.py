"""Drill: causal mask.

Write `causal_mask(n)`: an (n, n) tensor (bool, or int/float 0/1) that is True/1 where key
j <= query i (a position sees itself and the past) and False/0 where j > i, on the default
device. It is used as `scores.masked_fill(mask == 0, float('-inf'))` (so not an additive 0/-inf
mask). n goes up to a few hundred: no fixed-size buffer, no int8/uint8 positions. Never name a
device (device="cpu", .cpu()): the grader checks.

Grade it with: studyapp grade causal_mask <this file>
"""

import torch


def causal_mask(n):
    raise NotImplementedError("build the (n, n) causal mask here")
