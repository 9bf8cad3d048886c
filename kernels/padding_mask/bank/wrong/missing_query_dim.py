"""Returns (batch, max_len) without a query dim."""
import torch


def padding_mask(lengths, max_len):
    lengths = torch.as_tensor(lengths)
    return torch.arange(max_len).expand(len(lengths), max_len) < lengths.unsqueeze(1)
