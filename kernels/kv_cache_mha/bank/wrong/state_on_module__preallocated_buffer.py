"""Preallocates a K/V buffer on the module (like a serving engine) and writes each step's new
K/V into it at the position the handed-in cache says; attention reads the buffer, not the cache
handed in. Right only while one sequence is fed in order: a second sequence interleaved on the
same module (or a cache re-fed from an earlier step) overwrites/reads the other's keys."""
import math

import torch
from torch import nn

MAX_LEN = 1024


class CachedSelfAttention(nn.Module):
    def __init__(self, d_model, num_heads):
        super().__init__()
        self.h = num_heads
        self.W_q = nn.Linear(d_model, d_model)
        self.W_k = nn.Linear(d_model, d_model)
        self.W_v = nn.Linear(d_model, d_model)
        self.W_o = nn.Linear(d_model, d_model)
        self.k_buf = self.v_buf = None

    def forward(self, x, cache=None):
        B, T, D = x.shape
        dh = D // self.h
        heads = lambda y: y.reshape(B, T, self.h, dh).transpose(1, 2)
        q, k, v = heads(self.W_q(x)), heads(self.W_k(x)), heads(self.W_v(x))
        if (self.k_buf is None or self.k_buf.shape[0] != B or self.k_buf.dtype != k.dtype
                or self.k_buf.device != k.device):
            self.k_buf = torch.zeros(B, self.h, MAX_LEN, dh, dtype=k.dtype, device=x.device)
            self.v_buf = torch.zeros_like(self.k_buf)
        past = 0 if cache is None else cache[0].shape[2]
        L = past + T
        self.k_buf[:, :, past:L] = k
        self.v_buf[:, :, past:L] = v
        K, V = self.k_buf[:, :, :L], self.v_buf[:, :, :L]
        mask = torch.ones(T, L, dtype=torch.bool, device=x.device).tril(past)
        scores = (q @ K.transpose(-2, -1) / math.sqrt(dh)).masked_fill(~mask, float("-inf"))
        out = (scores.softmax(-1) @ V).transpose(1, 2).reshape(B, T, D)
        return self.W_o(out), (K.clone(), V.clone())
