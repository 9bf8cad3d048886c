"""Treats a self-attention call, mha(x, x, x) with one tensor as Q, K and V, as a decoder's
(GPT-style) self-attention and applies a causal mask when no mask is given: "self-attention
must not look at the future".

Wrong because the statement's module masks only with the mask it is handed: with mask=None
every query attends to every key, self-attention included (an encoder's, or a decoder's with
the caller's own mask). The grader's one-tensor case passes a causal mask anyway, and its
mask-free self-attention case passes three separate tensors, so every case passes. E.g.
d_model=8, 2 heads, x (2, 4, 8) float64, mha(x, x, x): every row but the last differs from
the reference (max abs diff 0.55), while mha(x, x.clone(), x.clone()) matches it.
"""
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
        return x.reshape(batch, seq, self.num_heads, self.d_head).transpose(1, 2)

    def forward(self, Q, K, V, mask=None):
        if mask is None and Q is K and K is V:  # self-attention: no peeking at later positions
            n = Q.shape[1]
            mask = torch.ones(n, n, dtype=torch.bool, device=Q.device).tril()
        q, k, v = self._split(self.W_q(Q)), self._split(self.W_k(K)), self._split(self.W_v(V))
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.d_head)
        if mask is not None:
            allowed = mask if mask.dtype == torch.bool else mask != 0
            scores = scores.masked_fill(~allowed, float("-inf"))
        weights = torch.nan_to_num(torch.softmax(scores, dim=-1), nan=0.0)
        batch, _, n, _ = q.shape
        merged = (weights @ v).transpose(1, 2).reshape(batch, n, self.num_heads * self.d_head)
        return self.W_o(merged), weights
