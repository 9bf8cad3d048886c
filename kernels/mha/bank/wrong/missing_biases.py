"""Projects with the Linear weights only (F.linear without bias)."""
import math

import torch
import torch.nn.functional as F
from torch import nn


class MultiHeadAttention(nn.Module):
    def __init__(self, d_model, num_heads):
        super().__init__()
        self.h = num_heads
        self.W_q, self.W_k, self.W_v, self.W_o = (nn.Linear(d_model, d_model) for _ in range(4))

    def forward(self, Q, K, V, mask=None):
        b, n, d = Q.shape
        m = K.shape[1]
        q = F.linear(Q, self.W_q.weight).view(b, n, self.h, -1).transpose(1, 2)
        k = F.linear(K, self.W_k.weight).view(b, m, self.h, -1).transpose(1, 2)
        v = F.linear(V, self.W_v.weight).view(b, m, self.h, -1).transpose(1, 2)
        scores = q @ k.transpose(-2, -1) / math.sqrt(d // self.h)
        if mask is not None:
            scores = scores.masked_fill(mask == 0, float("-inf"))
        out = (scores.softmax(-1) @ v).transpose(1, 2).reshape(b, n, d)
        return F.linear(out, self.W_o.weight)
