"""Appends in place, like a serving engine: each prefill (cache=None) allocates a K/V buffer with
room to grow, the returned cache is a view of it, and a later call whose cache IS a view of that
buffer (same data_ptr) just writes the new tokens after it instead of concatenating. A cache that
is not the module's (another sequence's) is copied into a fresh buffer, so sequences interleaved
on one module stay apart.

Wrong because the buffer is state on the module shared by every cache cut from it: a cache fed
twice (beam search forking, a speculative step rejected and redone, any caller re-feeding an
earlier step's cache, which the statement allows) makes the second call write its keys over
the positions the first call's returned cache still shows, so that cache silently changes and
the next step from it is wrong. The grader missed it (a hunt found it passing) because it only ever feeds each returned
cache once, in order (its second sequence and the side-by-side run start from cache=None, which
gets a new buffer, and a foreign cache is copied).
Concrete input: d_model=8, 2 heads, batch 1; prefill x0 (1, 4, 8) -> c1; step x1 (1, 1, 8) with
c1 -> c2a; step x2 (1, 1, 8) with c1 again (a fork); then step x3 (1, 1, 8) with c2a.
Caught since by the side-by-side check's run with a beam fork after each step.
"""
import math

import torch
from torch import nn


class CachedSelfAttention(nn.Module):
    def __init__(self, d_model, num_heads):
        super().__init__()
        self.h = num_heads
        self.W_q = nn.Linear(d_model, d_model)
        self.W_k = nn.Linear(d_model, d_model)
        self.W_v = nn.Linear(d_model, d_model)
        self.W_o = nn.Linear(d_model, d_model)
        self.k_buf = self.v_buf = None

    def _new_buffers(self, like, capacity, past=None):
        B, H, _, dh = like.shape
        self.k_buf = torch.empty(B, H, capacity, dh, dtype=like.dtype, device=like.device)
        self.v_buf = torch.empty_like(self.k_buf)
        if past is not None:
            length = past[0].shape[2]
            self.k_buf[:, :, :length] = past[0]
            self.v_buf[:, :, :length] = past[1]

    def forward(self, x, cache=None):
        B, T, D = x.shape
        dh = D // self.h
        heads = lambda y: y.reshape(B, T, self.h, dh).transpose(1, 2)
        q, k, v = heads(self.W_q(x)), heads(self.W_k(x)), heads(self.W_v(x))
        past = 0 if cache is None else cache[0].shape[2]
        L = past + T
        if cache is None:
            self._new_buffers(k, max(256, 2 * L))
        else:
            mine = (self.k_buf is not None and cache[0].data_ptr() == self.k_buf.data_ptr()
                    and cache[0].shape[:2] == self.k_buf.shape[:2] and cache[0].dtype == self.k_buf.dtype)
            if not mine or L > self.k_buf.shape[2]:  # another sequence's cache, or no room left
                self._new_buffers(k, max(256, 2 * L), past=cache)
        self.k_buf[:, :, past:L] = k
        self.v_buf[:, :, past:L] = v
        K, V = self.k_buf[:, :, :L], self.v_buf[:, :, :L]
        mask = torch.ones(T, L, dtype=torch.bool, device=x.device).tril(past)
        scores = (q @ K.transpose(-2, -1) / math.sqrt(dh)).masked_fill(~mask, float("-inf"))
        out = (scores.softmax(-1) @ V).transpose(1, 2).reshape(B, T, D)
        return self.W_o(out), (K, V)
