"""cos/sin of each position's angles cached by everything they depend on (length, offset, base,
head size, dtype and device) but not the layout: one table serves both, each call spreading it
over the pairs its layout asks for. The statement allows such a cache."""
import torch

_TABLES = {}


def _table(offset, n, d, base, dtype, device):
    key = (offset, n, d, base, dtype, device)
    if key not in _TABLES:
        angle_dtype = torch.float64 if dtype == torch.float64 else torch.float32
        inv_freq = base ** (-torch.arange(0, d, 2, dtype=angle_dtype, device=device) / d)
        angles = torch.arange(offset, offset + n, dtype=angle_dtype, device=device)[:, None] * inv_freq[None, :]
        _TABLES[key] = (angles.cos(), angles.sin())
    return _TABLES[key]


def apply_rope(x, offset=0, base=10000.0, interleaved=False):
    n, d = x.shape[-2], x.shape[-1]
    cos, sin = _table(offset, n, d, float(base), x.dtype, x.device)
    if interleaved:
        a, b = x[..., 0::2], x[..., 1::2]
    else:
        a, b = x[..., : d // 2], x[..., d // 2:]
    turned_a = (a * cos - b * sin).to(x.dtype)
    turned_b = (a * sin + b * cos).to(x.dtype)
    if interleaved:
        return torch.stack((turned_a, turned_b), dim=-1).flatten(-2)
    return torch.cat((turned_a, turned_b), dim=-1)
