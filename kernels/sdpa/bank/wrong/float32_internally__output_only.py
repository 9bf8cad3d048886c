"""Calls PyTorch's fused kernel on float32 copies and casts the output back (no weights)."""
import torch
import torch.nn.functional as F


def scaled_dot_product_attention(Q, K, V, mask=None):
    allowed = None if mask is None else mask.bool()
    out = F.scaled_dot_product_attention(Q.to(torch.float32), K.to(torch.float32), V.to(torch.float32),
                                         attn_mask=allowed)
    return out.to(Q.dtype)
