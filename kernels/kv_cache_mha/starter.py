"""Drill: multi-head self-attention with a KV cache.

Write `class CachedSelfAttention(nn.Module)`:

- `__init__(self, d_model, num_heads)` creates W_q, W_k, W_v, W_o, each nn.Linear(d_model, d_model)
  with bias (keep the names: the grader loads its weights and biases into them).
- `forward(self, x, cache=None) -> (out, cache)`: x is (batch, t, d_model), the NEW tokens only.
  cache is None at the prefill, then the cache your previous call returned: a tuple (K, V), each
  (batch, num_heads, length, d_head), holding the projected keys/values of every token so far
  (this call's included). out is (batch, t, d_model): the rows the full causal forward over the
  whole sequence so far gives for the new tokens.
- Inside a step, new token i sees every cached key and new keys 0..i (bottom-right causal mask).
- No state on the module between calls; create tensors on x's device, never on one you name.

Grade it with: studyapp grade kv_cache_mha <this file>
"""

import torch
from torch import nn


class CachedSelfAttention(nn.Module):
    def __init__(self, d_model, num_heads):
        super().__init__()
        raise NotImplementedError("create W_q, W_k, W_v, W_o here")

    def forward(self, x, cache=None):
        raise NotImplementedError("project the new tokens, grow the cache, attend, return (out, (K, V))")
