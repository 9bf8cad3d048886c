"""Masks only at the prefill ("decoding is one token at a time, so no mask is needed")."""
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
        scores_mask = None
        if cache is None:
            scores_mask = torch.ones(T, T, dtype=torch.bool, device=x.device).tril()
        else:
            k = torch.cat([cache[0], k], 2)
            v = torch.cat([cache[1], v], 2)
        scores = q @ k.transpose(2, 3) / math.sqrt(D // self.h)
        if scores_mask is not None:
            scores = scores.masked_fill(~scores_mask, float("-inf"))
        out = scores.softmax(-1) @ v
        return self.W_o(out.transpose(1, 2).reshape(B, T, D)), (k, v)
