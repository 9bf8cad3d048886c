"""Drill: grouped-query attention (GQA / MQA) on already projected heads.

Write `gqa_attention(Q, K, V, mask=None)`.

- Q: (B, H, n, d) query heads; K: (B, H_kv, m, d) and V: (B, H_kv, m, d_v) key/value heads,
  H_kv dividing H (H_kv == H is MHA, H_kv == 1 is MQA). Read H and H_kv from the shapes.
- Query head h reads KV head h // G, where G = H // H_kv (heads 0..G-1 share KV head 0).
- Per head: softmax(Q_h K^T / sqrt(d)) V, d = Q.shape[-1].
- mask (optional): bool, True = may attend, broadcastable to (B, H, n, m): (n, m),
  (B, 1, 1, m), (B, 1, n, m) or (B, H, n, m).
- Return (B, H, n, d_v) in the inputs' dtype and device, or (output, weights (B, H, n, m)).
- Don't modify the inputs; keep the softmax stable; float32/float64 graded strictly,
  float16/bfloat16 must run. Make every tensor on Q.device; never name a device.
- A query with every key blocked is not graded (zeros there are recommended).
- Fused calls are allowed (F.scaled_dot_product_attention, enable_gqa=True included).

Grade it with: studyapp grade gqa <this file>
"""

import torch


def gqa_attention(Q, K, V, mask=None):
    raise NotImplementedError("write grouped-query attention here")
