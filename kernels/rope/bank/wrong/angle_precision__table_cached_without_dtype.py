"""Caches the cos/sin table by (length, offset, base, d), as the statement allows, but not by
dtype: a table built in float32 for a float32 call is reused for a float64 x of the same length,
offset, base and d, so that float64 call gets float32 angles (off by ~1e-4 at positions ~4000)."""
import torch

_tables = {}


def apply_rope(x, offset=0, base=10000.0, interleaved=False):
    d, n = x.shape[-1], x.shape[-2]
    key = (n, offset, float(base), d)
    if key not in _tables:
        work = torch.float64 if x.dtype == torch.float64 else torch.float32
        inv = 1.0 / (base ** (torch.arange(0, d, 2, dtype=work, device=x.device) / d))
        angles = torch.arange(offset, offset + n, dtype=work, device=x.device)[:, None] * inv
        _tables[key] = (angles.cos(), angles.sin())
    cos, sin = _tables[key]
    work = torch.promote_types(cos.dtype, x.dtype)
    xw, cos, sin = x.to(work), cos.to(work, copy=False).to(x.device), sin.to(work).to(x.device)
    if interleaved:
        a, b = xw[..., 0::2], xw[..., 1::2]
        out = torch.stack((a * cos - b * sin, a * sin + b * cos), dim=-1).flatten(-2)
    else:
        a, b = xw[..., : d // 2], xw[..., d // 2:]
        out = torch.cat((a * cos - b * sin, a * sin + b * cos), dim=-1)
    return out.to(x.dtype)
