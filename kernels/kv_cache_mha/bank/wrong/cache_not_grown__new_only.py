"""Attends to past + new, but hands back only the new token's K/V as the cache."""
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
        q = self.W_q(x).view(B, T, self.h, -1).transpose(1, 2)
        k = self.W_k(x).view(B, T, self.h, -1).transpose(1, 2)
        v = self.W_v(x).view(B, T, self.h, -1).transpose(1, 2)
        keys, values = k, v
        if cache is not None:
            keys = torch.cat([cache[0], k], dim=2)
            values = torch.cat([cache[1], v], dim=2)
        L = keys.shape[2]
        mask = torch.ones(T, L, dtype=torch.bool, device=x.device).tril(diagonal=L - T)
        att = (q @ keys.transpose(-2, -1)) / math.sqrt(q.shape[-1])
        att = att.masked_fill(~mask, float("-inf")).softmax(dim=-1)
        y = (att @ values).transpose(1, 2).reshape(B, T, D)
        return self.W_o(y), (k, v)
