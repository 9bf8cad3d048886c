"""Delegates to PyTorch's fused kernel (bool mask: True = take part, our polarity)."""
import torch.nn.functional as F


def scaled_dot_product_attention(Q, K, V, mask=None):
    attn_mask = None if mask is None else mask.bool()
    return F.scaled_dot_product_attention(Q, K, V, attn_mask=attn_mask)
