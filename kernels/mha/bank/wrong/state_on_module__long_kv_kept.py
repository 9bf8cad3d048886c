"""Wrong because the projected K/V of a long key sequence are kept on the module, keyed only by
K's shape (as if a long K/V were always the same encoder output, re-read by every decoder call):
a later call with OTHER keys/values of the same long shape attends over the first call's. E.g.
m = 100 keys: mha(Q, K1, V1) then mha(Q, K2, V2), K2/V2 (2, 100, 8) other values: the second
output is the first's.

The grader missed it (a hunt found it passing) because each case builds a new module and every case longer than 64 (BIG)
calls it only once (ONE_CALL); the small cases, which are called again on other inputs, never
reach the kept K/V.
Caught since by the public case "long keys, called again".
"""
import math

import torch
from torch import nn

LONG = 64


class MultiHeadAttention(nn.Module):
    def __init__(self, d_model, num_heads):
        super().__init__()
        self.num_heads = num_heads
        self.d_head = d_model // num_heads
        self.W_q = nn.Linear(d_model, d_model)
        self.W_k = nn.Linear(d_model, d_model)
        self.W_v = nn.Linear(d_model, d_model)
        self.W_o = nn.Linear(d_model, d_model)
        self._kv = {}  # long K/V projected once: re-projecting them on every call is the cost

    def _split(self, x):
        batch, seq, _ = x.shape
        return x.reshape(batch, seq, self.num_heads, self.d_head).transpose(1, 2)

    def _keys_values(self, K, V):
        if K.shape[1] <= LONG:
            return self._split(self.W_k(K)), self._split(self.W_v(V))
        if K.shape not in self._kv:
            self._kv[K.shape] = (self._split(self.W_k(K)), self._split(self.W_v(V)))
        return self._kv[K.shape]

    def forward(self, Q, K, V, mask=None):
        q = self._split(self.W_q(Q))
        k, v = self._keys_values(K, V)
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.d_head)
        if mask is not None:
            scores = scores.masked_fill(mask == 0, float("-inf"))
        weights = torch.nan_to_num(torch.softmax(scores, dim=-1), nan=0.0)
        batch, n = Q.shape[0], Q.shape[1]
        return self.W_o((weights @ v).transpose(1, 2).reshape(batch, n, -1)), weights
