"""One fused projection for Q, K and V (stacked weights), einsum attention, output only."""
import torch
import torch.nn.functional as F
from torch import nn


class MultiHeadAttention(nn.Module):
    def __init__(self, d_model, num_heads):
        super().__init__()
        self.heads = num_heads
        self.W_q = nn.Linear(d_model, d_model)
        self.W_k = nn.Linear(d_model, d_model)
        self.W_v = nn.Linear(d_model, d_model)
        self.W_o = nn.Linear(d_model, d_model)

    def forward(self, Q, K, V, mask=None):
        weight = torch.stack([self.W_q.weight, self.W_k.weight, self.W_v.weight])
        bias = torch.stack([self.W_q.bias, self.W_k.bias, self.W_v.bias])
        q, k, v = (F.linear(x, weight[i], bias[i]) for i, x in enumerate((Q, K, V)))
        b, n, d = q.shape
        h = self.heads
        q = q.reshape(b, n, h, d // h)
        k = k.reshape(b, k.shape[1], h, d // h)
        v = v.reshape(b, v.shape[1], h, d // h)
        scores = torch.einsum("bnhd,bmhd->bhnm", q, k) / (d // h) ** 0.5
        if mask is not None:
            scores = torch.where(mask.bool(), scores, torch.tensor(float("-inf"), dtype=scores.dtype))
        out = torch.einsum("bhnm,bmhd->bnhd", scores.softmax(dim=-1), v).reshape(b, n, d)
        return self.W_o(out)
