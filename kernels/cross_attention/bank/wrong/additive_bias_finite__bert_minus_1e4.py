"""Turns the 0/1 source mask into BERT's "extended attention mask", (1 - mask) * -10000
(computed from mask.bool(), so bool, int and float masks alike), and adds it to the
scores (-10000 rather than -1e9 so that float16 does not overflow, and no NaN on an
all-padding source).

Wrong because -1e4 is not -inf: a padding key keeps the weight exp(s_pad - 1e4 - s_max),
which is no longer 0 once a row's scores spread over more than about 1e4. With large
activations (inputs x200 here, scores of several thousand) the padding keys take a large
share of the attention; the contract blocks them for any input (its "large activations"
cases stop at x6, where the spread stays far below 1e4).
Shows on: batch 2, d_model 8, 2 heads, float64, m = 6 with lengths [6, 3], n = 3, x and
memory = 200 * randn, nn.Linear's default weights: output off by 175 (largest |output| 237).
"""
import math

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

    def heads(self, y):
        B, L, D = y.shape
        return y.reshape(B, L, self.h, D // self.h).transpose(1, 2)

    def forward(self, x, memory, src_mask=None, cache=None):
        B, n, D = x.shape
        if cache is None:
            cache = (self.heads(self.W_k(memory)), self.heads(self.W_v(memory)))
        k, v = cache
        q = self.heads(self.W_q(x))
        scores = q @ k.transpose(-2, -1) / math.sqrt(D // self.h)
        if src_mask is not None:
            padding = (~src_mask.bool()).to(scores.dtype)  # 1 where padding, whatever the mask's dtype
            extended = padding[:, None, None, :] * -10000.0
            scores = scores + extended
        attn = torch.softmax(scores, dim=-1)
        out = (attn @ v).transpose(1, 2).reshape(B, n, D)
        return self.W_o(out), cache
