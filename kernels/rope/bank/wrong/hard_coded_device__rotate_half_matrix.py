"""The two layouts in two branches. Interleaved pairs are rotated with strided slices; the
default rotate-half layout multiplies x by a fixed (d, d) matrix J with x @ J = cat(-x2, x1),
built with torch.zeros(d, d) and no device=. Right on the CPU; with x on a GPU every call in the
default layout (GPT-NeoX, HF transformers) raises a device mismatch at x @ J."""
import torch


def _rotate_half_matrix(d, dtype):
    half = d // 2
    J = torch.zeros(d, d, dtype=dtype)
    J[torch.arange(half) + half, torch.arange(half)] = -1.0  # out[:half] = -x2
    J[torch.arange(half), torch.arange(half) + half] = 1.0   # out[half:] = x1
    return J


def apply_rope(x, offset=0, base=10000.0, interleaved=False):
    n, d = x.shape[-2], x.shape[-1]
    wide = torch.float64 if x.dtype == torch.float64 else torch.float32
    inv_freq = 1.0 / base ** (torch.arange(0, d, 2, dtype=wide, device=x.device) / d)
    angles = torch.outer(torch.arange(offset, offset + n, dtype=wide, device=x.device), inv_freq)
    xw = x.to(wide)
    if interleaved:
        cos, sin = angles.cos(), angles.sin()
        a, b = xw[..., 0::2], xw[..., 1::2]
        out = torch.stack((a * cos - b * sin, a * sin + b * cos), dim=-1).flatten(-2)
    else:
        cos, sin = torch.cat((angles, angles), dim=-1).cos(), torch.cat((angles, angles), dim=-1).sin()
        out = xw * cos + (xw @ _rotate_half_matrix(d, wide)) * sin
    return out.to(x.dtype)
