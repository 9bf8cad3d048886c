"""Decodes against the cache first and appends the new K/V afterwards."""
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

    def forward(self, x, cache=None):
        B, T, D = x.shape
        heads = lambda y: y.reshape(B, T, self.h, D // self.h).transpose(1, 2)
        q, k, v = heads(self.W_q(x)), heads(self.W_k(x)), heads(self.W_v(x))
        if cache is None:
            mask = torch.ones(T, T, dtype=torch.bool, device=x.device).tril()
            scores = (q @ k.transpose(-2, -1) / math.sqrt(D // self.h)).masked_fill(~mask, float("-inf"))
            out = scores.softmax(-1) @ v
            return self.W_o(out.transpose(1, 2).reshape(B, T, D)), (k, v)
        past_k, past_v = cache
        scores = q @ past_k.transpose(-2, -1) / math.sqrt(D // self.h)
        out = scores.softmax(-1) @ past_v
        new_cache = (torch.cat([past_k, k], dim=2), torch.cat([past_v, v], dim=2))
        return self.W_o(out.transpose(1, 2).reshape(B, T, D)), new_cache
