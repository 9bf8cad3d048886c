"""Causal multi-head self-attention with a KV cache (a reference solution)."""

import math

import torch
from torch import nn


class CachedSelfAttention(nn.Module):
    def __init__(self, d_model, num_heads):
        super().__init__()
        self.num_heads = num_heads
        self.d_head = d_model // num_heads
        self.W_q = nn.Linear(d_model, d_model)
        self.W_k = nn.Linear(d_model, d_model)
        self.W_v = nn.Linear(d_model, d_model)
        self.W_o = nn.Linear(d_model, d_model)

    def _split(self, x):
        batch, t, _ = x.shape
        return x.reshape(batch, t, self.num_heads, self.d_head).transpose(1, 2)

    def forward(self, x, cache=None):
        batch, t, d_model = x.shape
        q, k, v = self._split(self.W_q(x)), self._split(self.W_k(x)), self._split(self.W_v(x))
        if cache is not None:
            k = torch.cat([cache[0], k], dim=2)
            v = torch.cat([cache[1], v], dim=2)
        length = k.shape[2]
        past = length - t
        # Bottom-right causal mask: new token i sees every cached key and new keys 0..i.
        allowed = (torch.arange(length, device=x.device)[None, :]
                   <= torch.arange(t, device=x.device)[:, None] + past)
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.d_head)
        weights = torch.softmax(scores.masked_fill(~allowed, float("-inf")), dim=-1)
        merged = (weights @ v).transpose(1, 2).reshape(batch, t, d_model)
        return self.W_o(merged), (k, v)
