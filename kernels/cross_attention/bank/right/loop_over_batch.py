"""One item at a time, keeping only its real source positions (no mask needed inside)."""
import math

import torch
from torch import nn


class CrossAttention(nn.Module):
    def __init__(self, d_model, num_heads):
        super().__init__()
        self.num_heads = num_heads
        self.W_q = nn.Linear(d_model, d_model)
        self.W_k = nn.Linear(d_model, d_model)
        self.W_v = nn.Linear(d_model, d_model)
        self.W_o = nn.Linear(d_model, d_model)

    def forward(self, x, memory, src_mask=None, cache=None):
        batch, n, d_model = x.shape
        d_head = d_model // self.num_heads

        def heads(y):
            return y.reshape(y.shape[0], y.shape[1], self.num_heads, d_head).transpose(1, 2)

        if cache is None:
            cache = (heads(self.W_k(memory)), heads(self.W_v(memory)))
        q = heads(self.W_q(x))
        rows = []
        for b in range(batch):
            k, v = cache[0][b], cache[1][b]
            if src_mask is not None:
                real = src_mask[b] != 0
                k, v = k[:, real], v[:, real]
            if k.shape[1] == 0:  # nothing to attend to: zero attention
                rows.append(torch.zeros_like(q[b]))
                continue
            weights = torch.softmax(q[b] @ k.transpose(-2, -1) / math.sqrt(d_head), dim=-1)
            rows.append(weights @ v)
        merged = torch.stack(rows).transpose(1, 2).reshape(batch, n, d_model)
        return self.W_o(merged), cache
