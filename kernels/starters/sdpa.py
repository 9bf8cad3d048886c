"""Drill: scaled dot-product attention.

Write `scaled_dot_product_attention(Q, K, V, mask=None)`.

- Q: (*, n, d_k), K: (*, m, d_k), V: (*, m, d_v), with zero to two leading dims (batch, heads).
  n may differ from m, and d_k from d_v.
- mask (optional): bool, int or float 0/1, broadcastable to (*, n, m).
  1/True = the query may attend to that key; 0/False = blocked.
- Return softmax(Q K^T / sqrt(d_k)) V with shape (*, n, d_v), in the inputs' dtype and on their
  device, or the tuple (output, attention_weights) with weights (*, n, m) (graded too).
- Don't modify the inputs. Scores can reach +-100: keep the softmax numerically stable.

Grade it with: studyapp grade sdpa <this file>
"""

import torch


def scaled_dot_product_attention(Q, K, V, mask=None):
    raise NotImplementedError("write scaled dot-product attention here")
