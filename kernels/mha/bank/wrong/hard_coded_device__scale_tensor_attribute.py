"""Keeps the softmax scale as a tensor attribute made in __init__, as a well-known seq2seq
tutorial does (`torch.sqrt(torch.FloatTensor([head_dim]))`), cast to the scores' dtype in
forward. A plain tensor attribute is not a parameter or buffer, so `module.to(device)` leaves
it on the CPU, and a one-element 1-D tensor is not a CPU scalar PyTorch lets meet GPU tensors:
with the module and its inputs on a GPU, the division raises a device mismatch."""
import torch
from torch import nn


class MultiHeadAttention(nn.Module):
    def __init__(self, d_model, num_heads):
        super().__init__()
        self.num_heads = num_heads
        self.head_dim = d_model // num_heads
        self.W_q = nn.Linear(d_model, d_model)
        self.W_k = nn.Linear(d_model, d_model)
        self.W_v = nn.Linear(d_model, d_model)
        self.W_o = nn.Linear(d_model, d_model)
        self.scale = torch.sqrt(torch.FloatTensor([self.head_dim]))

    def forward(self, Q, K, V, mask=None):
        batch = Q.shape[0]
        q = self.W_q(Q).reshape(batch, -1, self.num_heads, self.head_dim).permute(0, 2, 1, 3)
        k = self.W_k(K).reshape(batch, -1, self.num_heads, self.head_dim).permute(0, 2, 1, 3)
        v = self.W_v(V).reshape(batch, -1, self.num_heads, self.head_dim).permute(0, 2, 1, 3)
        energy = torch.matmul(q, k.permute(0, 1, 3, 2)) / self.scale.to(q.dtype)
        if mask is not None:
            energy = energy.masked_fill(mask == 0, float("-inf"))
        attention = torch.nan_to_num(torch.softmax(energy, dim=-1), nan=0.0)
        x = torch.matmul(attention, v).permute(0, 2, 1, 3).reshape(batch, -1, self.num_heads * self.head_dim)
        return self.W_o(x), attention
