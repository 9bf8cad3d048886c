"""Puts the positions on the CPU whatever device the lengths are on."""
import torch


def padding_mask(lengths, max_len):
    lengths = torch.as_tensor(lengths)
    positions = torch.arange(max_len, device="cpu")
    return (positions[None, :] < lengths[:, None]).unsqueeze(1)
