"""Builds the causal mask as tril(ones(t, L)) without the offset of the cached length."""
import math

import torch
from torch import nn


class CachedSelfAttention(nn.Module):
    def __init__(self, d_model, num_heads):
        super().__init__()
        self.h = num_heads
        self.dk = d_model // num_heads
        self.W_q = nn.Linear(d_model, d_model)
        self.W_k = nn.Linear(d_model, d_model)
        self.W_v = nn.Linear(d_model, d_model)
        self.W_o = nn.Linear(d_model, d_model)

    def forward(self, x, cache=None):
        B, T, D = x.shape
        q = self.W_q(x).view(B, T, self.h, self.dk).transpose(1, 2)
        k = self.W_k(x).view(B, T, self.h, self.dk).transpose(1, 2)
        v = self.W_v(x).view(B, T, self.h, self.dk).transpose(1, 2)
        if cache is not None:
            past_k, past_v = cache
            k = torch.cat([past_k, k], dim=2)
            v = torch.cat([past_v, v], dim=2)
        L = k.shape[2]
        mask = torch.tril(torch.ones(T, L, device=x.device))
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.dk)
        scores = scores.masked_fill(mask == 0, float("-inf"))
        out = torch.softmax(scores, dim=-1) @ v
        return self.W_o(out.transpose(1, 2).reshape(B, T, D)), (k, v)
