"""Drill: cross-attention with a source padding mask and cached encoder K/V.

Write `class CrossAttention(nn.Module)`:

- `__init__(self, d_model, num_heads)` creates W_q, W_k, W_v, W_o, each nn.Linear(d_model, d_model)
  with bias (keep the names: the grader loads its weights and biases into them).
- `forward(self, x, memory, src_mask=None, cache=None) -> (out, cache)`:
  x (batch, n, d_model) are the decoder states (queries); memory (batch, m, d_model) is the encoder
  output (keys and values); src_mask (batch, m) is 1/True for real source tokens, 0/False for
  padding (bool or int/float 0/1); cache is None or (K, V), each (batch, num_heads, m, d_head): the
  projected memory. With a cache, use it and do not project memory again.
  Return out (batch, n, d_model) and the cache used.
- A source that is all padding: those rows are not graded (zero attention recommended).

Grade it with: studyapp grade cross_attention <this file>
"""

import torch
from torch import nn


class CrossAttention(nn.Module):
    def __init__(self, d_model, num_heads):
        super().__init__()
        raise NotImplementedError("create W_q, W_k, W_v, W_o here")

    def forward(self, x, memory, src_mask=None, cache=None):
        raise NotImplementedError("queries from x, keys/values from memory (or the cache); return (out, (K, V))")
