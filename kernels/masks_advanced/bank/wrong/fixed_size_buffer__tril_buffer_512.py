"""The causal mask sliced out of one lower triangle built once at import, GPT-2 style
(`register_buffer("bias", torch.tril(torch.ones(block_size, block_size)))`), with a block
size of 512 "since sequences are a few hundred tokens at most".

Wrong because the buffer caps the positions at 512: for n_k > 512 the slice is cut short,
so causal_mask(n_q, n_k) returns fewer rows/columns than (n_q, n_k) (e.g. causal_mask(40, 600)
gives a (0, 512) tensor, causal_mask(600, 600) a (512, 512) one): the statement allows sizes of
"a few hundred" with no fixed-size buffer. It is also made at import on whatever device was the
default then, not the default device at call time.
The grader missed it (a hunt found it passing) because its longest causal_mask case has n_k = 300 (public (40, 300),
(1, 300), (200, 257); fresh ones up to 80), all inside the buffer; the device probe only
watches devices the code names, and this buffer names none.
Shows on: causal_mask(40, 600) and causal_mask(600, 600) (see /tmp/hunt-ga/masks_buffer.py).
Caught since by the public causal_mask cases (600, 600) and (3, 2049).
"""
import torch

BLOCK_SIZE = 512
_CAUSAL = torch.ones(BLOCK_SIZE, BLOCK_SIZE, dtype=torch.bool).tril()


def causal_mask(n_q, n_k):
    # the n_q queries are the last n_q positions: rows n_k - n_q .. n_k - 1 of the big triangle
    return _CAUSAL[n_k - n_q:n_k, :n_k]


def sliding_window_mask(n, window):
    i = torch.arange(n)[:, None]
    j = torch.arange(n)[None, :]
    return (j <= i) & (i - j < window)


def causal_padding_mask(lengths, n):
    lengths = torch.as_tensor(lengths)
    pos = torch.arange(n, device=lengths.device)
    causal = pos[None, :] <= pos[:, None]
    keys = pos[None, :] < lengths[:, None]
    return (causal[None] & keys[:, None, :]).unsqueeze(1)


def left_padding_mask(lengths, n):
    lengths = torch.as_tensor(lengths)
    pos = torch.arange(n, device=lengths.device)
    return (pos[None, :] >= n - lengths[:, None])[:, None, None, :]
