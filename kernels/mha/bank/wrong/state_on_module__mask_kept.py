"""Turns the mask into a boolean 'blocked' tensor once and keeps it on the module: later calls
reuse the first call's mask whatever mask they are handed."""
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
        self.blocked = None

    def _split(self, x):
        batch, seq, _ = x.shape
        return x.reshape(batch, seq, self.num_heads, self.d_head).transpose(1, 2)

    def forward(self, Q, K, V, mask=None):
        if mask is not None and self.blocked is None:
            self.blocked = mask == 0
        q, k, v = self._split(self.W_q(Q)), self._split(self.W_k(K)), self._split(self.W_v(V))
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.d_head)
        if self.blocked is not None:
            scores = scores.masked_fill(self.blocked, float("-inf"))
        weights = torch.nan_to_num(torch.softmax(scores, dim=-1))
        merged = (weights @ v).transpose(1, 2).reshape(Q.shape[0], Q.shape[1], -1)
        return self.W_o(merged)
