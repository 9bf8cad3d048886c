"""Expands a new dim in front of the KV heads, so merging it tiles the heads."""
import torch
import torch.nn.functional as F


def gqa_attention(Q, K, V, mask=None):
    B, H, n, d = Q.shape
    H_kv = K.shape[1]
    K = K[:, None].expand(B, H // H_kv, H_kv, *K.shape[2:]).reshape(B, H, *K.shape[2:])
    V = V[:, None].expand(B, H // H_kv, H_kv, *V.shape[2:]).reshape(B, H, *V.shape[2:])
    return F.scaled_dot_product_attention(Q, K, V, attn_mask=mask)
