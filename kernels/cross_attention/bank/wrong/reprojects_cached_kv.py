"""Treats the cache as the memory to project: W_k/W_v run again on projected keys/values."""
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

    def merge(self, y):
        B, H, L, d = y.shape
        return y.transpose(1, 2).reshape(B, L, H * d)

    def forward(self, x, memory, src_mask=None, cache=None):
        B, n, D = x.shape
        if cache is None:
            k_in, v_in = memory, memory
        else:
            k_in, v_in = self.merge(cache[0]), self.merge(cache[1])
        k, v = self.heads(self.W_k(k_in)), self.heads(self.W_v(v_in))
        q = self.heads(self.W_q(x))
        scores = q @ k.transpose(-2, -1) / math.sqrt(D // self.h)
        if src_mask is not None:
            scores = scores.masked_fill(src_mask[:, None, None, :] == 0, float("-inf"))
        out = self.merge(scores.softmax(-1) @ v)
        return self.W_o(out), (k, v)
