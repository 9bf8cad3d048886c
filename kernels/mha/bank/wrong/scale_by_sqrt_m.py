"""Scales by the square root of K.size(1), the number of keys, taking it for the key width."""
import math

import torch
from torch import nn


class MultiHeadAttention(nn.Module):
    def __init__(self, d_model, num_heads):
        super().__init__()
        self.num_heads = num_heads
        self.d_head = d_model // num_heads
        self.W_q = nn.Linear(d_model, d_model)
        self.W_k = nn.Linear(d_model, d_model)
        self.W_v = nn.Linear(d_model, d_model)
        self.W_o = nn.Linear(d_model, d_model)

    def _split(self, x):
        batch, seq, _ = x.shape
        return x.view(batch, seq, self.num_heads, self.d_head).transpose(1, 2)

    def forward(self, Q, K, V, mask=None):
        q, k, v = self._split(self.W_q(Q)), self._split(self.W_k(K)), self._split(self.W_v(V))
        scores = q @ k.transpose(-2, -1) / math.sqrt(K.size(1))
        if mask is not None:
            scores = scores.masked_fill(mask == 0, float("-inf"))
        weights = torch.softmax(scores, dim=-1)
        batch, _, n, _ = q.shape
        merged = (weights @ v).transpose(1, 2).reshape(batch, n, -1)
        return self.W_o(merged), weights
