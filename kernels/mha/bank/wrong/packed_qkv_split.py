"""Wrong because the self-attention fast path (Q, K and V the same tensor, as
nn.MultiheadAttention checks with `query is key`) packs W_q/W_k/W_v into one (3*d_model) projection
and then splits it per head as (heads, 3, d_head), GPT-NeoX style: head h's q/k/v come from
features h*3*d_head.. of the packed output, a mix of the q, k and v projections, not from
features h*d_head:(h+1)*d_head of each. E.g. x (2, 4, 8), d_model=8, 2 heads, mha(x, x, x): the
output differs from the reference.

The grader missed it (a hunt found it passing) because it never passes one tensor as Q, K and V: even its
"self-attention" case draws three different tensors (and clone_tree copies each argument), so
the fast path never runs; the separate-projection path is right.
Caught since by the public case "self-attention, mha(x, x, x)".
"""
import math

import torch
import torch.nn.functional as F
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
        batch, n, d_model = Q.shape
        if Q is K and K is V:  # self-attention: one packed matmul instead of three
            weight = torch.cat([self.W_q.weight, self.W_k.weight, self.W_v.weight])
            bias = torch.cat([self.W_q.bias, self.W_k.bias, self.W_v.bias])
            qkv = F.linear(Q, weight, bias)  # (batch, n, 3 * d_model)
            qkv = qkv.view(batch, n, self.num_heads, 3 * self.d_head).transpose(1, 2)
            q, k, v = qkv.chunk(3, dim=-1)
        else:
            q, k, v = self._split(self.W_q(Q)), self._split(self.W_k(K)), self._split(self.W_v(V))
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.d_head)
        if mask is not None:
            scores = scores.masked_fill(mask == 0, float("-inf"))
        weights = torch.nan_to_num(torch.softmax(scores, dim=-1), nan=0.0)
        merged = (weights @ v).transpose(1, 2).reshape(batch, n, d_model)
        return self.W_o(merged), weights
