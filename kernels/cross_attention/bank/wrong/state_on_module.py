"""Projects the encoder output once per MODULE (kept on self) instead of once per sequence: a
later call with cache=None and another memory still attends over the first memory's K/V."""
import math

import torch
from torch import nn


class CrossAttention(nn.Module):
    def __init__(self, d_model, num_heads):
        super().__init__()
        self.h = num_heads
        self.W_q = nn.Linear(d_model, d_model)
        self.W_k = nn.Linear(d_model, d_model)
        self.W_v = nn.Linear(d_model, d_model)
        self.W_o = nn.Linear(d_model, d_model)
        self.encoded = None

    def heads(self, y):
        B, L, D = y.shape
        return y.reshape(B, L, self.h, D // self.h).transpose(1, 2)

    def forward(self, x, memory, src_mask=None, cache=None):
        B, n, D = x.shape
        if cache is None:
            if self.encoded is None:
                self.encoded = (self.heads(self.W_k(memory)), self.heads(self.W_v(memory)))
            cache = self.encoded
        k, v = cache
        q = self.heads(self.W_q(x))
        scores = q @ k.transpose(-2, -1) / math.sqrt(D // self.h)
        if src_mask is not None:
            scores = scores.masked_fill(src_mask[:, None, None, :] == 0, float("-inf"))
        weights = torch.nan_to_num(scores.softmax(-1))
        out = (weights @ v).transpose(1, 2).reshape(B, n, D)
        return self.W_o(out), cache
