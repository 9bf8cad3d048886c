"""HF's rotate_half for every call: the interleaved flag is accepted and ignored."""
import torch


def rotate_half(x):
    x1 = x[..., : x.shape[-1] // 2]
    x2 = x[..., x.shape[-1] // 2:]
    return torch.cat((-x2, x1), dim=-1)


def apply_rope(x, offset=0, base=10000.0, interleaved=False):
    n, d = x.shape[-2:]
    dtype = torch.float64 if x.dtype == torch.float64 else torch.float32
    inv_freq = 1.0 / (base ** (torch.arange(0, d, 2, dtype=dtype, device=x.device) / d))
    t = torch.arange(offset, offset + n, dtype=dtype, device=x.device)
    freqs = torch.outer(t, inv_freq)
    emb = torch.cat((freqs, freqs), dim=-1)
    xw = x.to(dtype)
    return (xw * emb.cos() + rotate_half(xw) * emb.sin()).to(x.dtype)
