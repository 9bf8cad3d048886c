"""Lengths squeezed into int8: a length of 200 becomes negative."""
import torch


def padding_mask(lengths, max_len):
    lengths = torch.as_tensor(lengths).to(torch.int8)
    return (torch.arange(max_len)[None, :] < lengths[:, None]).unsqueeze(1)
