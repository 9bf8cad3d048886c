"""Keeps state the contract allows on the module: the causal masks, built once per (new tokens,
length) and device and reused. They depend on the sizes alone, never on the inputs' values."""
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
        self.masks = {}

    def mask(self, t, length, device):
        key = (t, length, str(device))
        if key not in self.masks:
            self.masks[key] = torch.ones(t, length, dtype=torch.bool, device=device).tril(length - t)
        return self.masks[key]

    def forward(self, x, cache=None):
        B, T, D = x.shape
        heads = lambda y: y.reshape(B, T, self.h, D // self.h).transpose(1, 2)
        q, k, v = heads(self.W_q(x)), heads(self.W_k(x)), heads(self.W_v(x))
        if cache is not None:
            k, v = torch.cat([cache[0], k], 2), torch.cat([cache[1], v], 2)
        L = k.shape[2]
        scores = q @ k.transpose(-2, -1) / math.sqrt(D // self.h)
        weights = scores.masked_fill(~self.mask(T, L, x.device), float("-inf")).softmax(-1)
        return self.W_o((weights @ v).transpose(1, 2).reshape(B, T, D)), (k, v)
