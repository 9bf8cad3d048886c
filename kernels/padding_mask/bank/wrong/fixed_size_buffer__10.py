"""A (10, 10) table of 'position < length' rows, looked up by length."""
import torch

_TABLE = torch.arange(10)[None, :] < torch.arange(11)[:, None]


def padding_mask(lengths, max_len):
    lengths = torch.as_tensor(lengths).clamp(max=10)
    return _TABLE[lengths][:, None, :max_len]
