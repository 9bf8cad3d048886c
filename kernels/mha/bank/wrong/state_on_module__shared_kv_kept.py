"""When K and V are the same tensor (self-attention `mha(x, x, x)`, or one encoder memory
passed as both), the module projects it once and keeps the projected K/V on the module, keyed
by the tensor's shape, dtype and device ("the same memory comes back call after call").

Wrong because a later call with ANOTHER tensor of that shape as K and V (the next batch of
self-attention, another memory) attends over the first call's keys and values. The grader
misses it because the only case passing one tensor as K and V ("self-attention,
mha(x, x, x)") is called twice on the same x and never on other inputs (its payload gets no
second inputs: `plan_calls` is skipped for one-tensor cases); every other case passes K and V
as separate copies, which take the ordinary path.
Concrete input: d_model=8, 2 heads; mha(x1, x1, x1) then mha(x2, x2, x2), x1, x2 randn(2, 4, 8).
Caught since by the one-tensor case, now called again on another one tensor.
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
        self._shared = {}

    def _split(self, x):
        batch, seq, _ = x.shape
        return x.reshape(batch, seq, self.num_heads, self.d_head).transpose(1, 2)

    def _kv(self, K, V):
        if K is not V:
            return self._split(self.W_k(K)), self._split(self.W_v(V))
        key = (tuple(K.shape), K.dtype, K.device)
        if key not in self._shared:
            self._shared[key] = (self._split(self.W_k(K)), self._split(self.W_v(V)))
        return self._shared[key]

    def forward(self, Q, K, V, mask=None):
        q = self._split(self.W_q(Q))
        k, v = self._kv(K, V)
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.d_head)
        if mask is not None:
            scores = scores.masked_fill(mask == 0, float("-inf"))
        weights = torch.nan_to_num(torch.softmax(scores, dim=-1), nan=0.0)
        batch, _, n, _ = q.shape
        merged = (weights @ v).transpose(1, 2).reshape(batch, n, self.num_heads * self.d_head)
        return self.W_o(merged), weights
