"""Key positions from a fixed buffer of 32, sliced to max_len."""
import torch

_POSITIONS = torch.arange(32)


def padding_mask(lengths, max_len):
    lengths = torch.as_tensor(lengths)
    return (_POSITIONS[:max_len][None, :] < lengths[:, None]).unsqueeze(1)
