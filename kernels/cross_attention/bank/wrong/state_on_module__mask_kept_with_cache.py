"""Builds the source-padding bias once per source, when the memory is projected (cache=None),
and keeps it on self for the cached decode steps: the cache format is only (K, V), so the
mask "that belongs with it" goes on the module.

Wrong because a call handed a cache attends with the mask of the module's LAST cache=None
call, not the src_mask it is handed: two sequences decoded side by side on one module (or a
beam/batch reorder, which reorders the cache and the mask together) get another source's
padding. E.g. sequence A (lengths [5, 2]) starts, sequence B (lengths [2, 5]) starts, then A
steps with its own cache and mask: A's keys are masked with B's lengths (d_model 8, 2 heads,
m=5: max abs diff 0.469, /tmp/hunt-gd/scripts/cross.py).
The grader missed it (a hunt found it passing) because within a case every call passes the same src_mask tensor (call 4's
cache comes from other encoder states but the mask is the case's), its second inputs start again
with cache=None (which rebuilds the bias), and cross_attention has no side-by-side run.
Caught since by the public case "two sequences side by side, other masks".
"""
import math

import torch
from torch import nn


class CrossAttention(nn.Module):
    def __init__(self, d_model, num_heads):
        super().__init__()
        self.num_heads = num_heads
        self.d_head = d_model // num_heads
        self.W_q = nn.Linear(d_model, d_model)
        self.W_k = nn.Linear(d_model, d_model)
        self.W_v = nn.Linear(d_model, d_model)
        self.W_o = nn.Linear(d_model, d_model)
        self.src_blocked = None

    def _split(self, y):
        batch, length, _ = y.shape
        return y.reshape(batch, length, self.num_heads, self.d_head).transpose(1, 2)

    def forward(self, x, memory, src_mask=None, cache=None):
        batch, n, d_model = x.shape
        if cache is None:  # a new source: project it and build its padding mask once
            cache = (self._split(self.W_k(memory)), self._split(self.W_v(memory)))
            self.src_blocked = None if src_mask is None else (src_mask == 0)[:, None, None, :]
        k, v = cache
        q = self._split(self.W_q(x))
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.d_head)
        if self.src_blocked is not None:
            scores = scores.masked_fill(self.src_blocked, float("-inf"))
        weights = torch.nan_to_num(torch.softmax(scores, dim=-1), nan=0.0)
        merged = (weights @ v).transpose(1, 2).reshape(batch, n, d_model)
        return self.W_o(merged), cache
