"""Positions and lengths as uint8: both wrap at 256."""
import torch


def padding_mask(lengths, max_len):
    lengths = torch.as_tensor(lengths).to(torch.uint8)
    positions = torch.arange(max_len).to(torch.uint8)
    return (positions[None, :] < lengths[:, None])[:, None, :]
