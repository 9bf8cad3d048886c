"""The HF way: full-width cos/sin built for the layout, and a partner function per layout."""
import torch


def rotate_half(x):
    x1, x2 = x.chunk(2, dim=-1)
    return torch.cat((-x2, x1), dim=-1)


def rotate_every_two(x):
    x1, x2 = x[..., ::2], x[..., 1::2]
    return torch.stack((-x2, x1), dim=-1).flatten(-2)


def apply_rope(x, offset=0, base=10000.0, interleaved=False):
    n, d = x.shape[-2:]
    dtype = torch.float64 if x.dtype == torch.float64 else torch.float32
    inv_freq = 1.0 / (base ** (torch.arange(0, d, 2, device=x.device, dtype=dtype) / d))
    t = torch.arange(offset, offset + n, device=x.device, dtype=dtype)
    freqs = torch.einsum("i,j->ij", t, inv_freq)
    if interleaved:
        emb, partner = freqs.repeat_interleave(2, dim=-1), rotate_every_two
    else:
        emb, partner = torch.cat((freqs, freqs), dim=-1), rotate_half
    cos, sin = emb.cos()[None, None], emb.sin()[None, None]  # (1, 1, n, d)
    xw = x.to(dtype)
    return (xw * cos + partner(xw) * sin).to(x.dtype)
