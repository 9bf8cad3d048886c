"""Caches the cos/sin table by length, offset, head dim, dtype and device, but not by base:
"the base is a model constant", so one table per shape and position looked enough.

Wrong because a call with another base at the same positions, head dim and dtype (the statement
allows bases 100 to 10^6 in any call) is rotated with the first call's base. The grader misses
it because no two of its cases share (n, offset, d, dtype) with different bases: the base 500000
case (n=7, d=16, float64, offset 0), the base 100 case (n=5, d=8, float32, offset 3) and the
base 500 property case (n=80, d=8, float64, offsets 40 and 0) each have a key of their own, and
a fresh case matches one only by a rare chance.
Concrete input: x randn(1, 2, 7, 16) float64, apply_rope(x) (base 10000), then
apply_rope(x, base=500000.0).
Caught since by the public case "base 500000 after the defaults".
"""
import torch

_tables = {}


def apply_rope(x, offset=0, base=10000.0, interleaved=False):
    d, n = x.shape[-1], x.shape[-2]
    work = torch.float64 if x.dtype == torch.float64 else torch.float32
    key = (n, offset, d, x.dtype, x.device)
    if key not in _tables:
        inv = 1.0 / (base ** (torch.arange(0, d, 2, dtype=work, device=x.device) / d))
        angles = torch.arange(offset, offset + n, dtype=work, device=x.device)[:, None] * inv
        _tables[key] = (angles.cos(), angles.sin())  # (n, d/2)
    cos, sin = _tables[key]
    xw = x.to(work)
    if interleaved:
        a, b = xw[..., 0::2], xw[..., 1::2]
        out = torch.stack((a * cos - b * sin, a * sin + b * cos), dim=-1).flatten(-2)
    else:
        a, b = xw[..., : d // 2], xw[..., d // 2:]
        out = torch.cat((a * cos - b * sin, a * sin + b * cos), dim=-1)
    return out.to(x.dtype)
