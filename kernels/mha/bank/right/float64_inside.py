"""Does the whole forward in float64 with F.linear, casts back at the end."""
import math

import torch
import torch.nn.functional as F
from torch import nn


class MultiHeadAttention(nn.Module):
    def __init__(self, d_model, num_heads):
        super().__init__()
        self.num_heads = num_heads
        self.W_q, self.W_k, self.W_v, self.W_o = (nn.Linear(d_model, d_model) for _ in range(4))

    def forward(self, Q, K, V, mask=None):
        def proj(x, layer):
            return F.linear(x.double(), layer.weight.double(), layer.bias.double())

        b, n, d_model = Q.shape
        h = self.num_heads
        q = proj(Q, self.W_q).unflatten(-1, (h, -1)).permute(0, 2, 1, 3)
        k = proj(K, self.W_k).unflatten(-1, (h, -1)).permute(0, 2, 1, 3)
        v = proj(V, self.W_v).unflatten(-1, (h, -1)).permute(0, 2, 1, 3)
        s = torch.einsum("bhid,bhjd->bhij", q, k) / math.sqrt(d_model // h)
        if mask is not None:
            s = s.masked_fill(~mask.bool(), float("-inf"))
        w = s.softmax(-1).nan_to_num(0.0)
        out = torch.einsum("bhij,bhjd->bihd", w, v).reshape(b, n, d_model)
        return proj(out, self.W_o).to(Q.dtype)
