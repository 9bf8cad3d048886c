"""Stacks W_q, W_k and W_v into one (3, d_model, d_model) weight on the first forward, "so the
three projections are one batched matmul and the stack is not rebuilt on every call", and keeps
the stack on the module (rebuilt only when the dtype or device changes).

Wrong because the stack is a copy: any change to the parameters after the first call (a new
checkpoint loaded with load_state_dict, a fine-tuning step, copy_ into W_q.weight) never reaches
Q, K and V, while W_o follows. Every call the grader makes comes after its one loading of the
weights, so all outputs are right there. E.g. d_model=8, 2 heads, x (2, 4, 8) float64: after
load_state_dict of a second set of weights the output is off by ~1 against a module built with
that set: the statement's projections are W_q/W_k/W_v as they are, not as they were at the
first call.
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
        self._stacked = None

    def _qkv_weights(self):
        w = self.W_q.weight
        if self._stacked is None or self._stacked[0].dtype != w.dtype or self._stacked[0].device != w.device:
            weight = torch.stack([self.W_q.weight, self.W_k.weight, self.W_v.weight]).detach().clone()
            bias = torch.stack([self.W_q.bias, self.W_k.bias, self.W_v.bias]).detach().clone()
            self._stacked = (weight, bias)
        return self._stacked

    def _split(self, x):
        batch, seq, _ = x.shape
        return x.reshape(batch, seq, self.num_heads, self.d_head).transpose(1, 2)

    def forward(self, Q, K, V, mask=None):
        weight, bias = self._qkv_weights()
        q, k, v = (self._split(x @ weight[i].T + bias[i]) for i, x in enumerate((Q, K, V)))
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.d_head)
        if mask is not None:
            allowed = mask if mask.dtype == torch.bool else mask != 0
            scores = scores.masked_fill(~allowed, float("-inf"))
        weights = torch.nan_to_num(torch.softmax(scores, dim=-1), nan=0.0)
        batch, _, n, _ = q.shape
        merged = (weights @ v).transpose(1, 2).reshape(batch, n, self.num_heads * self.d_head)
        return self.W_o(merged), weights
