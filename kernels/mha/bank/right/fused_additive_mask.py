"""F.scaled_dot_product_attention per head with an additive float mask (0 / -inf)."""
import torch
import torch.nn.functional as F
from torch import nn


class MultiHeadAttention(nn.Module):
    def __init__(self, d_model, num_heads):
        super().__init__()
        self.num_heads = num_heads
        self.W_q = nn.Linear(d_model, d_model)
        self.W_k = nn.Linear(d_model, d_model)
        self.W_v = nn.Linear(d_model, d_model)
        self.W_o = nn.Linear(d_model, d_model)

    def forward(self, Q, K, V, mask=None):
        def heads(x):
            b, s, d = x.shape
            return x.reshape(b, s, self.num_heads, d // self.num_heads).transpose(1, 2)

        bias = None
        if mask is not None:
            bias = torch.zeros(mask.shape, dtype=Q.dtype, device=Q.device).masked_fill(mask == 0, float("-inf"))
        out = F.scaled_dot_product_attention(heads(self.W_q(Q)), heads(self.W_k(K)), heads(self.W_v(V)),
                                             attn_mask=bias)
        return self.W_o(out.transpose(1, 2).reshape(Q.shape))
