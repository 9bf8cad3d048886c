"""Two packed fast paths, as nn.MultiheadAttention's in-projection has them: one (3 * d_model)
projection when Q is K is V (self-attention, done right), and one (2 * d_model) projection when
only K is V (encoder-decoder attention: mha(x, memory, memory)). The second one splits the
packed K/V output per head as (heads, 2 * d_head) and then chunks it into k and v, so head h's
k and v are made of features of both projections instead of features h*d_head:(h+1)*d_head of
each. Any call with K and V the same tensor and another Q gets a wrong output."""
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

    def _split(self, y):
        batch, seq, _ = y.shape
        return y.reshape(batch, seq, self.num_heads, self.d_head).transpose(1, 2)

    def forward(self, Q, K, V, mask=None):
        batch, n, d_model = Q.shape
        if Q is K and K is V:  # self-attention: one packed projection, chunked first, then split
            weight = torch.cat([self.W_q.weight, self.W_k.weight, self.W_v.weight])
            bias = torch.cat([self.W_q.bias, self.W_k.bias, self.W_v.bias])
            q, k, v = (self._split(part) for part in F.linear(Q, weight, bias).chunk(3, dim=-1))
        elif K is V:  # encoder-decoder attention: the memory is projected to K and V at once
            q = self._split(self.W_q(Q))
            weight = torch.cat([self.W_k.weight, self.W_v.weight])
            bias = torch.cat([self.W_k.bias, self.W_v.bias])
            kv = F.linear(K, weight, bias)  # (batch, m, 2 * d_model)
            kv = kv.reshape(batch, K.shape[1], self.num_heads, 2 * self.d_head).transpose(1, 2)
            k, v = kv.chunk(2, dim=-1)
        else:
            q, k, v = self._split(self.W_q(Q)), self._split(self.W_k(K)), self._split(self.W_v(V))
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.d_head)
        if mask is not None:
            scores = scores.masked_fill(mask == 0, float("-inf"))
        weights = torch.nan_to_num(torch.softmax(scores, dim=-1), nan=0.0)
        merged = (weights @ v).transpose(1, 2).reshape(batch, n, d_model)
        return self.W_o(merged), weights
