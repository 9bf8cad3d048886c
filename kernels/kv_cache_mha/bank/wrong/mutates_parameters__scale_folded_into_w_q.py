"""Folds 1/sqrt(d_head) into W_q's weight and bias, in place, on the first call (a flag on the
module says it is done). Outputs and caches come out right, but forward has rewritten the
parameters the caller loaded: state_dict() now holds a scaled W_q, and weights loaded after the
first call (another checkpoint) are never scaled, so every later output is wrong."""
import math

import torch
from torch import nn


class CachedSelfAttention(nn.Module):
    def __init__(self, d_model, num_heads):
        super().__init__()
        self.num_heads = num_heads
        self.d_head = d_model // num_heads
        self.W_q = nn.Linear(d_model, d_model)
        self.W_k = nn.Linear(d_model, d_model)
        self.W_v = nn.Linear(d_model, d_model)
        self.W_o = nn.Linear(d_model, d_model)
        self._scale_folded = False

    def _split(self, y):
        batch, t, _ = y.shape
        return y.reshape(batch, t, self.num_heads, self.d_head).transpose(1, 2)

    def _fold_scale(self):
        # Decoding divides every step's scores by sqrt(d_head): do it once, in W_q itself.
        with torch.no_grad():
            scale = 1.0 / math.sqrt(self.d_head)
            self.W_q.weight.mul_(scale)
            self.W_q.bias.mul_(scale)
        self._scale_folded = True

    def forward(self, x, cache=None):
        if not self._scale_folded:
            self._fold_scale()
        batch, t, d_model = x.shape
        q = self._split(self.W_q(x))  # already scaled
        k, v = self._split(self.W_k(x)), self._split(self.W_v(x))
        if cache is not None:
            k = torch.cat([cache[0], k], dim=2)
            v = torch.cat([cache[1], v], dim=2)
        length = k.shape[2]
        allowed = (torch.arange(length, device=x.device)[None, :]
                   <= torch.arange(t, device=x.device)[:, None] + (length - t))
        scores = (q @ k.transpose(-2, -1)).masked_fill(~allowed, float("-inf"))
        merged = (torch.softmax(scores, dim=-1) @ v).transpose(1, 2).reshape(batch, t, d_model)
        return self.W_o(merged), (k, v)
