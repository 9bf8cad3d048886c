"""Written for (batch, seq, heads, dim): seq_len from dim 1, cos/sin shaped (1, seq, 1, dim)."""
import torch


def rotate_half(x):
    x1, x2 = x.chunk(2, dim=-1)
    return torch.cat((-x2, x1), dim=-1)


def rotate_every_two(x):
    return torch.stack((-x[..., 1::2], x[..., ::2]), dim=-1).flatten(-2)


def apply_rope(x, offset=0, base=10000.0, interleaved=False):
    seq_len, d = x.shape[1], x.shape[-1]
    dtype = torch.float64 if x.dtype == torch.float64 else torch.float32
    inv_freq = 1.0 / (base ** (torch.arange(0, d, 2, dtype=dtype, device=x.device) / d))
    freqs = torch.outer(torch.arange(offset, offset + seq_len, dtype=dtype, device=x.device), inv_freq)
    if interleaved:
        emb, partner = freqs.repeat_interleave(2, dim=-1), rotate_every_two
    else:
        emb, partner = torch.cat((freqs, freqs), dim=-1), rotate_half
    cos, sin = emb.cos()[None, :, None, :], emb.sin()[None, :, None, :]
    xw = x.to(dtype)
    return (xw * cos + partner(xw) * sin).to(x.dtype)
