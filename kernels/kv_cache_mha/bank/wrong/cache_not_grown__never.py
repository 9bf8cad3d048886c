"""Never reads the cache: each call attends only to its own tokens and returns their K/V."""
import math

import torch
from torch import nn


class CachedSelfAttention(nn.Module):
    def __init__(self, d_model, num_heads):
        super().__init__()
        self.num_heads = num_heads
        self.W_q = nn.Linear(d_model, d_model)
        self.W_k = nn.Linear(d_model, d_model)
        self.W_v = nn.Linear(d_model, d_model)
        self.W_o = nn.Linear(d_model, d_model)

    def split(self, x):
        b, t, d = x.shape
        return x.reshape(b, t, self.num_heads, d // self.num_heads).transpose(1, 2)

    def forward(self, x, cache=None):
        b, t, d = x.shape
        q, k, v = self.split(self.W_q(x)), self.split(self.W_k(x)), self.split(self.W_v(x))
        causal = torch.tril(torch.ones(t, t, dtype=torch.bool, device=x.device))
        scores = q @ k.transpose(-2, -1) / math.sqrt(d // self.num_heads)
        scores = scores.masked_fill(~causal, float("-inf"))
        out = (torch.softmax(scores, -1) @ v).transpose(1, 2).reshape(b, t, d)
        return self.W_o(out), (k, v)
