"""One pair at a time: the dims it joins, its frequency, its rotation."""
import math

import torch


def apply_rope(x, offset=0, base=10000.0, interleaved=False):
    n, d = x.shape[-2:]
    dtype = torch.float64 if x.dtype == torch.float64 else torch.float32
    positions = torch.arange(offset, offset + n, device=x.device, dtype=dtype)
    xw = x.to(dtype)
    out = torch.empty_like(xw)
    for i in range(d // 2):
        first, second = (2 * i, 2 * i + 1) if interleaved else (i, i + d // 2)
        angle = positions * math.pow(base, -2 * i / d)
        cos, sin = torch.cos(angle), torch.sin(angle)
        a, b = xw[..., first], xw[..., second]
        out[..., first] = a * cos - b * sin
        out[..., second] = a * sin + b * cos
    return out.to(x.dtype)
