"""Splits heads and calls F.scaled_dot_product_attention per batch of heads."""
import torch.nn.functional as F
from torch import nn


class MultiHeadAttention(nn.Module):
    def __init__(self, d_model, num_heads):
        super().__init__()
        self.num_heads = num_heads
        self.W_q, self.W_k, self.W_v, self.W_o = [nn.Linear(d_model, d_model) for _ in range(4)]

    def forward(self, Q, K, V, mask=None):
        def split(x):
            return x.unflatten(-1, (self.num_heads, -1)).transpose(1, 2)

        attn_mask = None if mask is None else mask.bool()
        out = F.scaled_dot_product_attention(split(self.W_q(Q)), split(self.W_k(K)), split(self.W_v(V)),
                                             attn_mask=attn_mask)
        return self.W_o(out.transpose(1, 2).flatten(-2))
