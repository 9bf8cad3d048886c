"""Positions built directly as int8: they wrap at 128."""
import torch


def causal_mask(n):
    rows = torch.arange(n, dtype=torch.int8).unsqueeze(1)
    cols = torch.arange(n, dtype=torch.int8).unsqueeze(0)
    return (cols <= rows).to(torch.int64)
