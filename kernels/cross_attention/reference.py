"""Cross-attention with a source padding mask and cached encoder K/V (a reference solution)."""

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

    def _split(self, y):
        batch, length, _ = y.shape
        return y.reshape(batch, length, self.num_heads, self.d_head).transpose(1, 2)

    def forward(self, x, memory, src_mask=None, cache=None):
        batch, n, d_model = x.shape
        if cache is None:  # the encoder output is projected once; later calls reuse it
            cache = (self._split(self.W_k(memory)), self._split(self.W_v(memory)))
        k, v = cache
        q = self._split(self.W_q(x))
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.d_head)
        if src_mask is not None:
            blocked = (src_mask == 0)[:, None, None, :]  # padding KEYS, for every head and query
            scores = scores.masked_fill(blocked, float("-inf"))
        weights = torch.softmax(scores, dim=-1)
        if src_mask is not None:  # a source that is all padding: zero attention, not NaN
            weights = torch.nan_to_num(weights, nan=0.0)
        merged = (weights @ v).transpose(1, 2).reshape(batch, n, d_model)
        return self.W_o(merged), cache
