"""cos/sin tables cached in a global keyed by length, head size, base and dtype, but not by
device: the first call's table, made on its x's device, is handed to every later call with the
same key. The statement lists the device among what a cached table depends on: after a call on
the CPU, the same sizes on a GPU multiply a CUDA x by CPU tables and raise."""
import torch

_TABLES = {}


def _cos_sin(end, d, base, dtype, device):
    key = (end, d, float(base), dtype)
    if key not in _TABLES:
        inv_freq = 1.0 / base ** (torch.arange(0, d, 2, dtype=dtype, device=device) / d)
        angles = torch.outer(torch.arange(end, dtype=dtype, device=device), inv_freq)
        _TABLES[key] = (angles.cos(), angles.sin())
    return _TABLES[key]


def apply_rope(x, offset=0, base=10000.0, interleaved=False):
    n, d = x.shape[-2], x.shape[-1]
    wide = torch.float64 if x.dtype == torch.float64 else torch.float32
    cos, sin = _cos_sin(offset + n, d, base, wide, x.device)
    cos, sin = cos[offset:], sin[offset:]
    xw = x.to(wide)
    if interleaved:
        a, b = xw[..., 0::2], xw[..., 1::2]
        out = torch.stack((a * cos - b * sin, a * sin + b * cos), dim=-1).flatten(-2)
    else:
        a, b = xw[..., : d // 2], xw[..., d // 2:]
        out = torch.cat((a * cos - b * sin, a * sin + b * cos), dim=-1)
    return out.to(x.dtype)
