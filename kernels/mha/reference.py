"""Multi-head attention: project, split into heads, attend per head, merge, project back."""

import math

import torch
from torch import nn


class MultiHeadAttention(nn.Module):
    def __init__(self, d_model, num_heads):
        super().__init__()
        assert d_model % num_heads == 0, "d_model must split evenly into heads"
        self.num_heads = num_heads
        self.d_head = d_model // num_heads
        self.W_q = nn.Linear(d_model, d_model)
        self.W_k = nn.Linear(d_model, d_model)
        self.W_v = nn.Linear(d_model, d_model)
        self.W_o = nn.Linear(d_model, d_model)

    def _split_heads(self, x):
        """(batch, seq, d_model) -> (batch, heads, seq, d_head): head h owns features h*d_head:(h+1)*d_head."""
        batch, seq, _ = x.shape
        return x.reshape(batch, seq, self.num_heads, self.d_head).transpose(1, 2)

    def forward(self, Q, K, V, mask=None):
        q = self._split_heads(self.W_q(Q))
        k = self._split_heads(self.W_k(K))
        v = self._split_heads(self.W_v(V))
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.d_head)  # (batch, heads, n, m)
        if mask is not None:
            allowed = mask if mask.dtype == torch.bool else mask != 0
            scores = scores.masked_fill(~allowed, float("-inf"))  # (batch, 1, n, m) broadcasts over heads
        weights = torch.nan_to_num(torch.softmax(scores, dim=-1), nan=0.0)  # fully masked rows: 0
        batch, _, n, _ = q.shape
        merged = (weights @ v).transpose(1, 2).reshape(batch, n, self.num_heads * self.d_head)
        return self.W_o(merged), weights
