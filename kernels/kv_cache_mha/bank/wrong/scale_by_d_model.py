"""Scales the scores by sqrt(d_model)."""
import math

import torch
from torch import nn


class CachedSelfAttention(nn.Module):
    def __init__(self, d_model, num_heads):
        super().__init__()
        self.d_model, self.h = d_model, num_heads
        self.W_q = nn.Linear(d_model, d_model)
        self.W_k = nn.Linear(d_model, d_model)
        self.W_v = nn.Linear(d_model, d_model)
        self.W_o = nn.Linear(d_model, d_model)

    def forward(self, x, cache=None):
        B, T, D = x.shape
        heads = lambda y: y.reshape(B, T, self.h, D // self.h).transpose(1, 2)
        q, k, v = heads(self.W_q(x)), heads(self.W_k(x)), heads(self.W_v(x))
        if cache is not None:
            k, v = torch.cat([cache[0], k], 2), torch.cat([cache[1], v], 2)
        L = k.shape[2]
        mask = torch.ones(T, L, dtype=torch.bool, device=x.device).tril(L - T)
        scores = (q @ k.transpose(-2, -1) / math.sqrt(self.d_model)).masked_fill(~mask, float("-inf"))
        out = (scores.softmax(-1) @ v).transpose(1, 2).reshape(B, T, D)
        return self.W_o(out), (k, v)
