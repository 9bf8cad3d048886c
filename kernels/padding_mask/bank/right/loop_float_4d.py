"""A plain loop filling a float (batch, 1, 1, max_len) mask."""
import torch


def padding_mask(lengths, max_len):
    lengths = [int(x) for x in lengths]
    mask = torch.zeros(len(lengths), 1, 1, max_len)
    for i, length in enumerate(lengths):
        mask[i, ..., :length] = 1.0
    return mask
