"""Masks the future keys with masked_fill(-1e4): the fix a learner makes after -1e9 overflowed
float16 (-1e4 fits in every float dtype, and no query is ever fully masked here, so no
finite-fill NaN question comes up).

Wrong because -1e4 is not -inf: a future key keeps the weight exp(-1e4 - s_max), which is no
longer 0 once a row's visible scores all lie below about -1e4 + 20. With large activations
(inputs x200 below, scores of several thousand either way) a query whose visible scores are all
very negative attends mostly to the future keys of its prefill or chunk. The contract blocks
them for any input; the grader's "large activations" cases stop at x6.
Shows on: batch 2, d_model 8, 2 heads, float64, a prefill of 6 tokens, x = 200 * randn,
nn.Linear's default weights: output off by hundreds (see the commit message).
"""
import math

import torch
from torch import nn


class CachedSelfAttention(nn.Module):
    def __init__(self, d_model, num_heads):
        super().__init__()
        self.d_model, self.h = d_model, num_heads
        self.W_q = nn.Linear(d_model, d_model)
        self.W_k = nn.Linear(d_model, d_model)
        self.W_v = nn.Linear(d_model, d_model)
        self.W_o = nn.Linear(d_model, d_model)

    def forward(self, x, cache=None):
        B, T, D = x.shape
        heads = lambda y: y.reshape(B, T, self.h, D // self.h).transpose(1, 2)  # noqa: E731
        q, k, v = heads(self.W_q(x)), heads(self.W_k(x)), heads(self.W_v(x))
        if cache is not None:
            k, v = torch.cat([cache[0], k], 2), torch.cat([cache[1], v], 2)
        L = k.shape[2]
        mask = torch.ones(T, L, dtype=torch.bool, device=x.device).tril(L - T)
        scores = (q @ k.transpose(-2, -1) / math.sqrt(D // self.h)).masked_fill(~mask, -1e4)
        out = (scores.softmax(-1) @ v).transpose(1, 2).reshape(B, T, D)
        return self.W_o(out), (k, v)
