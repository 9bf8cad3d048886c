"""One head at a time: slice each head's columns, attend, concatenate."""
import math

import torch
from torch import nn


class MultiHeadAttention(nn.Module):
    def __init__(self, d_model, num_heads):
        super().__init__()
        self.h = num_heads
        self.W_q = nn.Linear(d_model, d_model)
        self.W_k = nn.Linear(d_model, d_model)
        self.W_v = nn.Linear(d_model, d_model)
        self.W_o = nn.Linear(d_model, d_model)

    def forward(self, Q, K, V, mask=None):
        q, k, v = self.W_q(Q), self.W_k(K), self.W_v(V)
        d = q.shape[-1] // self.h
        heads, weights = [], []
        for i in range(self.h):
            cols = slice(i * d, (i + 1) * d)
            s = q[..., cols] @ k[..., cols].transpose(1, 2) / math.sqrt(d)
            if mask is not None:
                per_head = mask if mask.dim() < 4 else mask[:, 0]
                s = s.masked_fill(per_head == 0, float("-inf"))
            w = torch.softmax(s, dim=-1)
            heads.append(w @ v[..., cols])
            weights.append(w)
        return self.W_o(torch.cat(heads, dim=-1)), torch.stack(weights, dim=1)
