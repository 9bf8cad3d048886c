"""Key positions from a fixed buffer of 512 (a "max context" constant), sliced to max_len:
right up to 512 positions, too narrow past it."""
import torch

MAX_CONTEXT = 512
_POSITIONS = torch.arange(MAX_CONTEXT)


def padding_mask(lengths, max_len):
    lengths = torch.as_tensor(lengths).reshape(-1)
    positions = _POSITIONS[:max_len].to(lengths.device)
    return (positions[None, :] < lengths[:, None]).unsqueeze(1)
