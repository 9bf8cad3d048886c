"""Plain Python lists turned into a tensor: (batch, 1, 1, max_len) of 0/1 ints."""
import torch


def padding_mask(lengths, max_len):
    rows = [[1 if j < int(length) else 0 for j in range(max_len)] for length in lengths]
    return torch.tensor(rows, dtype=torch.int32)[:, None, None, :]
