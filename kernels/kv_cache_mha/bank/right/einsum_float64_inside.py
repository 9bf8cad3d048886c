"""einsum, computed in float64 and returned in the inputs' dtype."""
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

    def forward(self, x, cache=None):
        B, T, D = x.shape
        dh = D // self.h
        q = self.W_q(x).reshape(B, T, self.h, dh)
        k = self.W_k(x).reshape(B, T, self.h, dh).permute(0, 2, 1, 3)
        v = self.W_v(x).reshape(B, T, self.h, dh).permute(0, 2, 1, 3)
        if cache is not None:
            k = torch.cat([cache[0], k], dim=2)
            v = torch.cat([cache[1], v], dim=2)
        L = k.shape[2]
        scores = torch.einsum("bthd,bhld->bhtl", q.double(), k.double()) * dh ** -0.5
        pos_q = torch.arange(L - T, L, device=x.device)
        pos_k = torch.arange(L, device=x.device)
        scores = scores.masked_fill(pos_k[None, :] > pos_q[:, None], float("-inf"))
        out = torch.einsum("bhtl,bhld->bthd", scores.softmax(dim=-1), v.double())
        return self.W_o(out.reshape(B, T, D).to(x.dtype)), (k, v)
