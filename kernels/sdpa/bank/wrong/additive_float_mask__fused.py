"""Hands a float mask straight to F.scaled_dot_product_attention, which adds it."""
import torch.nn.functional as F


def scaled_dot_product_attention(Q, K, V, mask=None):
    if mask is not None and not mask.is_floating_point():
        mask = mask.bool()
    return F.scaled_dot_product_attention(Q, K, V, attn_mask=mask)
