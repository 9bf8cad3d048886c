"""Wrong because the cos/sin table is cached by length, offset and base (as the statement says is
fine) plus dtype and device, but not by the head dim d, which sets the inverse frequencies: a
table built for one d is reused for another. A d = 2 table is (n, 1) (pair 0's frequency, 1 rad
per position) and broadcasts silently over every pair of a wider x. E.g. apply_rope on x
(1, 1, 6, 2), offset=2, then on x (1, 2, 6, 8), offset=2: the second call turns every pair by
pair 0's angle.

The grader missed it (a hunt found it passing) because no two of its cases share (n, offset, base, dtype) with different d
(the d = 2 case, n = 6, offset 2, float64, is the only one with that key; a fresh case matches it
only by a rare chance).
Caught since by the public case "d = 8 after d = 2, same positions".
"""
import torch

_tables = {}


def apply_rope(x, offset=0, base=10000.0, interleaved=False):
    d, n = x.shape[-1], x.shape[-2]
    work = torch.float64 if x.dtype == torch.float64 else torch.float32
    key = (n, offset, float(base), x.dtype, x.device)
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
