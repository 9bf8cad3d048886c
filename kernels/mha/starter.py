"""Drill: multi-head attention.

Write `class MultiHeadAttention(nn.Module)`:

- `__init__(self, d_model, num_heads)` creates W_q, W_k, W_v, W_o, each
  nn.Linear(d_model, d_model) with bias (keep these names: the grader loads its own random
  weights and non-zero biases into them).
- `forward(self, Q, K, V, mask=None)`: Q, K, V are the inputs BEFORE projection (x, x, x for
  self-attention): Q is (batch, n, d_model), K and V are (batch, m, d_model) (m may differ
  from n). mask (optional, bool or 0/1 int/float, 1 = may attend; not an additive mask)
  broadcasts to (batch, 1, n, m). Project with W_q/W_k/W_v, split into num_heads heads of size
  d_model // num_heads (head h = features h*d_head:(h+1)*d_head), apply scaled dot-product
  attention per head, merge the heads back in that order, apply W_o.
- Return the output (batch, n, d_model), or (output, weights) with weights
  (batch, num_heads, n, m).
- F.scaled_dot_product_attention per head is allowed; nn.MultiheadAttention is not (the grader
  loads weights into your W_q..W_o). Inputs may be non-contiguous, up to a few hundred
  positions; float16 must run. Create tensors on the inputs' device, never on one you name.

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
