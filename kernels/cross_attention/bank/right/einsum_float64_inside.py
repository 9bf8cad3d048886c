"""einsum in float64 with a -inf fill; NaN rows of all-padding sources left as NaN (allowed)."""
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

    def forward(self, x, memory, src_mask=None, cache=None):
        B, n, D = x.shape
        dh = D // self.h
        if cache is None:
            m = memory.shape[1]
            cache = (self.W_k(memory).reshape(B, m, self.h, dh).permute(0, 2, 1, 3),
                     self.W_v(memory).reshape(B, m, self.h, dh).permute(0, 2, 1, 3))
        k, v = cache
        q = self.W_q(x).reshape(B, n, self.h, dh)
        scores = torch.einsum("bnhd,bhmd->bhnm", q.double(), k.double()) / dh ** 0.5
        if src_mask is not None:
            scores = scores.masked_fill(~src_mask.bool().reshape(B, 1, 1, -1), float("-inf"))
        out = torch.einsum("bhnm,bhmd->bnhd", scores.softmax(-1), v.double())
        return self.W_o(out.reshape(B, n, D).to(x.dtype)), cache
