"""F.scaled_dot_product_attention with an additive float mask built from the 0/1 one."""
import torch
import torch.nn.functional as F


def scaled_dot_product_attention(Q, K, V, mask=None):
    bias = None
    if mask is not None:
        bias = torch.zeros(mask.shape, dtype=Q.dtype, device=Q.device)
        bias = bias.masked_fill(mask == 0, float("-inf"))
    return F.scaled_dot_product_attention(Q, K, V, attn_mask=bias)
