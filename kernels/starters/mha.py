"""Drill: multi-head attention.

Write `class MultiHeadAttention(nn.Module)`:

- `__init__(self, d_model, num_heads)` creates W_q, W_k, W_v, W_o, each
  nn.Linear(d_model, d_model) with bias (keep these names: the grader loads its own random
  weights and non-zero biases into them).
- `forward(self, Q, K, V, mask=None)`: Q is (batch, n, d_model), K and V are (batch, m, d_model)
  (m may differ from n). mask (optional, 0/1 or bool, 1 = may attend) broadcasts to
  (batch, 1, n, m). Project, split into num_heads heads of size d_model // num_heads, apply
  scaled dot-product attention per head, merge the heads, apply W_o.
- Return the output (batch, n, d_model), or (output, weights) with weights
  (batch, num_heads, n, m).

Grade it with: studyapp grade mha <this file>
"""

import torch
from torch import nn


class MultiHeadAttention(nn.Module):
    def __init__(self, d_model, num_heads):
        super().__init__()
        raise NotImplementedError("create W_q, W_k, W_v, W_o here")

    def forward(self, Q, K, V, mask=None):
        raise NotImplementedError("write the forward pass here")
