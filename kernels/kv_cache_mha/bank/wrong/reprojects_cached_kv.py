"""Joins the cached keys/values with the new inputs and projects everything again."""
import math

import torch
from torch import nn


class CachedSelfAttention(nn.Module):
    def __init__(self, d_model, num_heads):
        super().__init__()
        self.h = num_heads
        self.W_q = nn.Linear(d_model, d_model)
        self.W_k = nn.Linear(d_model, d_model)
        self.W_v = nn.Linear(d_model, d_model)
        self.W_o = nn.Linear(d_model, d_model)

    def _heads(self, y):
        B, T, D = y.shape
        return y.reshape(B, T, self.h, D // self.h).transpose(1, 2)

    def _merge(self, y):
        B, H, T, d = y.shape
        return y.transpose(1, 2).reshape(B, T, H * d)

    def forward(self, x, cache=None):
        B, T, D = x.shape
        k_in, v_in = x, x
        if cache is not None:
            k_in = torch.cat([self._merge(cache[0]), x], dim=1)
            v_in = torch.cat([self._merge(cache[1]), x], dim=1)
        q = self._heads(self.W_q(x))
        k, v = self._heads(self.W_k(k_in)), self._heads(self.W_v(v_in))
        L = k.shape[2]
        allowed = torch.arange(L, device=x.device)[None] <= torch.arange(T, device=x.device)[:, None] + (L - T)
        scores = (q @ k.transpose(-2, -1) / math.sqrt(D // self.h)).masked_fill(~allowed, float("-inf"))
        out = self._merge(scores.softmax(-1) @ v)
        return self.W_o(out), (k, v)
