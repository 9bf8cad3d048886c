"""Each pair as one complex number, turned by multiplying with e^(i·angle); float64 throughout."""
import torch


def apply_rope(x, offset=0, base=10000.0, interleaved=False):
    n, d = x.shape[-2:]
    half = d // 2
    inv_freq = base ** (-torch.arange(half, dtype=torch.float64, device=x.device) * 2 / d)
    positions = offset + torch.arange(n, dtype=torch.float64, device=x.device)
    turn = torch.polar(torch.ones(n, half, dtype=torch.float64, device=x.device), positions[:, None] * inv_freq)
    xd = x.double()
    if interleaved:
        pairs = torch.view_as_complex(xd.reshape(*x.shape[:-1], half, 2).contiguous())
        return torch.view_as_real(pairs * turn).flatten(-2).to(x.dtype)
    pairs = torch.complex(xd[..., :half], xd[..., half:])
    turned = pairs * turn
    return torch.cat((turned.real, turned.imag), dim=-1).to(x.dtype)
