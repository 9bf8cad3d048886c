"""Reads interleaved=True as 'split into halves'."""
import torch


def apply_rope(x, offset=0, base=10000.0, interleaved=False):
    n, d = x.shape[-2:]
    dtype = torch.float64 if x.dtype == torch.float64 else torch.float32
    inv_freq = 1.0 / (base ** (torch.arange(0, d, 2, dtype=dtype, device=x.device) / d))
    angles = torch.outer(torch.arange(offset, offset + n, dtype=dtype, device=x.device), inv_freq)
    cos, sin = angles.cos(), angles.sin()
    xw = x.to(dtype)
    if interleaved:
        a, b = xw[..., : d // 2], xw[..., d // 2:]
        return torch.cat((a * cos - b * sin, a * sin + b * cos), dim=-1).to(x.dtype)
    a, b = xw[..., 0::2], xw[..., 1::2]
    return torch.stack((a * cos - b * sin, a * sin + b * cos), dim=-1).flatten(-2).to(x.dtype)
