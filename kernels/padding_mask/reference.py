"""A padding mask: a key is real when its position is below its sequence's length."""

import torch


def padding_mask(lengths, max_len):
    lengths = torch.as_tensor(lengths).reshape(-1)
    positions = torch.arange(max_len, device=lengths.device)  # int64: no wrap at 128 or 256
    real_keys = positions[None, :] < lengths[:, None]  # (batch, max_len)
    return real_keys[:, None, :]  # (batch, 1, max_len): the same keys blocked for every query
