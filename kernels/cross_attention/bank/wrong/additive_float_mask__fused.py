"""Hands the 0/1 source mask to F.scaled_dot_product_attention as a float: it is ADDED."""
import torch.nn.functional as F
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

    def heads(self, y):
        B, L, D = y.shape
        return y.reshape(B, L, self.h, D // self.h).transpose(1, 2)

    def forward(self, x, memory, src_mask=None, cache=None):
        B, n, D = x.shape
        if cache is None:
            cache = (self.heads(self.W_k(memory)), self.heads(self.W_v(memory)))
        k, v = cache
        q = self.heads(self.W_q(x))
        mask = None if src_mask is None else src_mask[:, None, None, :].to(q.dtype)
        out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
        return self.W_o(out.transpose(1, 2).reshape(B, n, D)), cache
