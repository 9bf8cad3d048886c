"""Wrong because a LONG encoder output's projected K/V are kept on the module, keyed by the
memory's shape, and reused whenever a later call starts with cache=None on a memory of that
shape (a new sentence, another batch): it attends over the first source's keys and values. E.g.
m = 100 source positions: module(x, memory1) then module(x, memory2), memory2 other values of
the same shape (2, 100, 8): the second output is the first's.

The grader missed it (a hunt found it passing) because every case longer than 64 (BIG) runs its four calls once
(ONE_CALL), so cache=None is seen only once per module on a long memory; the small cases, which
run a second sequence on the same module, never reach the kept K/V.
Caught since by the public case "long source, then another memory".
"""
import math

import torch
from torch import nn

LONG = 64


class CrossAttention(nn.Module):
    def __init__(self, d_model, num_heads):
        super().__init__()
        self.num_heads = num_heads
        self.d_head = d_model // num_heads
        self.W_q = nn.Linear(d_model, d_model)
        self.W_k = nn.Linear(d_model, d_model)
        self.W_v = nn.Linear(d_model, d_model)
        self.W_o = nn.Linear(d_model, d_model)
        self._encoded = {}  # a long source is projected once, whoever asks for it

    def _split(self, y):
        batch, length, _ = y.shape
        return y.reshape(batch, length, self.num_heads, self.d_head).transpose(1, 2)

    def _project(self, memory):
        if memory.shape[1] <= LONG:
            return self._split(self.W_k(memory)), self._split(self.W_v(memory))
        if memory.shape not in self._encoded:
            self._encoded[memory.shape] = (self._split(self.W_k(memory)), self._split(self.W_v(memory)))
        return self._encoded[memory.shape]

    def forward(self, x, memory, src_mask=None, cache=None):
        batch, n, d_model = x.shape
        if cache is None:
            cache = self._project(memory)
        k, v = cache
        q = self._split(self.W_q(x))
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.d_head)
        if src_mask is not None:
            scores = scores.masked_fill((src_mask == 0)[:, None, None, :], float("-inf"))
        weights = torch.nan_to_num(torch.softmax(scores, dim=-1), nan=0.0)
        merged = (weights @ v).transpose(1, 2).reshape(batch, n, d_model)
        return self.W_o(merged), cache
