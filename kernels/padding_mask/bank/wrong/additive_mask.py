"""Returns the additive form attention adds to the scores (0 for real keys, -inf for padding)."""
import torch


def padding_mask(lengths, max_len):
    lengths = torch.as_tensor(lengths)
    padding = torch.arange(max_len)[None, :] >= lengths[:, None]
    additive = torch.zeros(padding.shape).masked_fill(padding, float("-inf"))
    return additive[:, None, :]
