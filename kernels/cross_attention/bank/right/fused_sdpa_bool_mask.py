"""F.scaled_dot_product_attention with the source mask as bool (it zeroes all-padding rows)."""
import torch.nn.functional as F
from torch import nn


class CrossAttention(nn.Module):
    def __init__(self, d_model, num_heads):
        super().__init__()
        self.num_heads = num_heads
        self.W_q = nn.Linear(d_model, d_model)
        self.W_k = nn.Linear(d_model, d_model)
        self.W_v = nn.Linear(d_model, d_model)
        self.W_o = nn.Linear(d_model, d_model)

    def forward(self, x, memory, src_mask=None, cache=None):
        b, n, d = x.shape
        split = lambda y: y.unflatten(-1, (self.num_heads, -1)).transpose(1, 2)
        if cache is None:
            cache = (split(self.W_k(memory)), split(self.W_v(memory)))
        mask = None if src_mask is None else src_mask.bool()[:, None, None, :]
        out = F.scaled_dot_product_attention(split(self.W_q(x)), *cache, attn_mask=mask)
        return self.W_o(out.transpose(1, 2).flatten(2)), cache
