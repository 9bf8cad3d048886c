"""Marks the padding positions with True."""
import torch


def padding_mask(lengths, max_len):
    lengths = torch.as_tensor(lengths)
    return (torch.arange(max_len)[None, :] >= lengths[:, None]).unsqueeze(1)
