"""One cos/sin cache for both layouts, laid out NeoX style (cat(freqs, freqs))."""
import torch


def apply_rope(x, offset=0, base=10000.0, interleaved=False):
    n, d = x.shape[-2:]
    dtype = torch.float64 if x.dtype == torch.float64 else torch.float32
    inv_freq = 1.0 / (base ** (torch.arange(0, d, 2, dtype=dtype, device=x.device) / d))
    freqs = torch.outer(torch.arange(offset, offset + n, dtype=dtype, device=x.device), inv_freq)
    emb = torch.cat((freqs, freqs), dim=-1)
    cos, sin = emb.cos(), emb.sin()
    xw = x.to(dtype)
    if interleaved:
        partner = torch.stack((-xw[..., 1::2], xw[..., 0::2]), dim=-1).reshape(xw.shape)
    else:
        partner = torch.cat((-xw[..., d // 2:], xw[..., : d // 2]), dim=-1)
    return (xw * cos + partner * sin).to(x.dtype)
