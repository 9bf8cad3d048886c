"""RoPE: angles position * base^(-2i/d) in float32 (float64 for float64 x), pairs by layout."""

import torch


def apply_rope(x, offset=0, base=10000.0, interleaved=False):
    n, d = x.shape[-2], x.shape[-1]
    if d % 2:
        raise ValueError(f"RoPE rotates pairs of dims: the head dim must be even, got {d}")
    # float16 holds integers exactly only up to 2048: never compute positions or angles in it
    wide = torch.float64 if x.dtype == torch.float64 else torch.float32
    inv_freq = 1.0 / base ** (torch.arange(0, d, 2, dtype=wide, device=x.device) / d)  # (d/2,)
    positions = torch.arange(offset, offset + n, dtype=wide, device=x.device)
    angles = torch.outer(positions, inv_freq)  # (n, d/2): row t is position offset + t
    cos, sin = angles.cos(), angles.sin()
    xw = x.to(wide)
    if interleaved:
        a, b = xw[..., 0::2], xw[..., 1::2]
        out = torch.stack((a * cos - b * sin, a * sin + b * cos), dim=-1).flatten(-2)
    else:
        a, b = xw[..., : d // 2], xw[..., d // 2:]
        out = torch.cat((a * cos - b * sin, a * sin + b * cos), dim=-1)
    return out.to(x.dtype)
