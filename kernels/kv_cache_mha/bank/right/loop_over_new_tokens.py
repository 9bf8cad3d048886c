"""One new token at a time: token i attends to the first past + i + 1 keys."""
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

    def forward(self, x, cache=None):
        batch, t, d_model = x.shape
        d_head = d_model // self.num_heads

        def heads(y):
            return y.reshape(batch, t, self.num_heads, d_head).transpose(1, 2)

        q, k, v = heads(self.W_q(x)), heads(self.W_k(x)), heads(self.W_v(x))
        if cache is not None:
            k, v = torch.cat([cache[0], k], dim=2), torch.cat([cache[1], v], dim=2)
        past = k.shape[2] - t
        rows = []
        for i in range(t):
            seen = past + i + 1
            scores = q[:, :, i:i + 1] @ k[:, :, :seen].transpose(-2, -1) / math.sqrt(d_head)
            rows.append(torch.softmax(scores, dim=-1) @ v[:, :, :seen])
        out = torch.cat(rows, dim=2).transpose(1, 2).reshape(batch, t, d_model)
        return self.W_o(out), (k, v)
