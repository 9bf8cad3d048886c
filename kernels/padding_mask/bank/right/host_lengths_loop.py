"""Reads the lengths on the host (.cpu().tolist()) and fills a bool mask made on the default device."""
import torch


def padding_mask(lengths, max_len):
    lengths = torch.as_tensor(lengths).cpu().tolist()
    mask = torch.zeros(len(lengths), 1, max_len, dtype=torch.bool)
    for i, length in enumerate(lengths):
        mask[i, :, :length] = True
    return mask
