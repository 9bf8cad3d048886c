"""Builds the inverse frequencies and positions with the legacy typed constructors
(torch.FloatTensor / torch.DoubleTensor): those always make CPU tensors, whatever device x is
on, so with x on a GPU the products with cos/sin raise a device mismatch."""
import torch


def apply_rope(x, offset=0, base=10000.0, interleaved=False):
    n, d = x.shape[-2], x.shape[-1]
    # float64 tables for float64 x, float32 otherwise (never float16 positions)
    Table = torch.DoubleTensor if x.dtype == torch.float64 else torch.FloatTensor
    inv_freq = Table([base ** (-2 * i / d) for i in range(d // 2)])  # (d/2,)
    positions = Table(range(offset, offset + n))  # (n,)
    angles = torch.outer(positions, inv_freq)  # (n, d/2)
    cos, sin = angles.cos(), angles.sin()
    xw = x.to(cos.dtype)
    if interleaved:
        a, b = xw[..., 0::2], xw[..., 1::2]
        out = torch.stack((a * cos - b * sin, a * sin + b * cos), dim=-1).flatten(-2)
    else:
        a, b = xw[..., : d // 2], xw[..., d // 2:]
        out = torch.cat((a * cos - b * sin, a * sin + b * cos), dim=-1)
    return out.to(x.dtype)
