"""Drill: scaled dot-product attention.

Write `scaled_dot_product_attention(Q, K, V, mask=None)`.

- Q: (*, n, d_k), K: (*, m, d_k), V: (*, m, d_v), with zero to two leading dims (batch, heads).
  n may differ from m, and d_k from d_v.
- mask (optional): bool, int or float 0/1, broadcastable to (*, n, m).
  1/True = the query may attend to that key; 0/False = blocked. A float mask is 0/1 here, NOT
  PyTorch's additive float mask (F.scaled_dot_product_attention adds a float attn_mask to the
  scores): make it bool first. With 4-D inputs a 3-D mask broadcasts as (heads, n, m).
- Return softmax(Q K^T / sqrt(d_k)) V with shape (*, n, d_v), in the inputs' dtype and on their
  device, or the tuple (output, attention_weights) with weights (*, n, m) (graded too).
- Don't modify the inputs. Scores reach +-100 in some cases and sit near -2e4 in another: keep
  the softmax numerically stable.
- Cases: n and m up to a few hundred, transposed/expanded (non-contiguous) inputs, float32 and
  float64 graded strictly; float16/bfloat16 must run (-1e9 overflows float16), their accuracy
  is only reported. Make every tensor on Q.device; never name a device (checked without a GPU).
- A query with every key blocked is not graded (zeros there, like PyTorch, are recommended).
- F.scaled_dot_product_attention is allowed (give it a bool mask).

Grade it with: studyapp grade sdpa <this file>
"""

import torch


def scaled_dot_product_attention(Q, K, V, mask=None):
    raise NotImplementedError("write scaled dot-product attention here")
