"""Keeps the cache on self and grows it forever; the cache argument is ignored."""
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
        self.k_cache = None
        self.v_cache = None

    def forward(self, x, cache=None):
        B, T, D = x.shape
        heads = lambda y: y.reshape(B, T, self.h, D // self.h).transpose(1, 2)
        q, k, v = heads(self.W_q(x)), heads(self.W_k(x)), heads(self.W_v(x))
        if self.k_cache is not None:
            k = torch.cat([self.k_cache, k], 2)
            v = torch.cat([self.v_cache, v], 2)
        self.k_cache, self.v_cache = k, v
        L = k.shape[2]
        mask = torch.ones(T, L, dtype=torch.bool, device=x.device).tril(L - T)
        scores = (q @ k.transpose(-2, -1) / math.sqrt(D // self.h)).masked_fill(~mask, float("-inf"))
        out = (scores.softmax(-1) @ v).transpose(1, 2).reshape(B, T, D)
        return self.W_o(out), (k, v)
