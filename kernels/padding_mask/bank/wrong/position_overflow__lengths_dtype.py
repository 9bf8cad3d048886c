"""Wrong because the positions are made in the lengths' own dtype (to compare like with like):
handed uint8 (or int8) lengths, `arange(max_len, dtype=torch.uint8)` wraps at 256, so the padding
keys at positions 256.. read as 0.. and are allowed again. E.g. lengths = torch.tensor([200, 100],
dtype=torch.uint8), max_len = 300: keys 256..299 are allowed (they are padding for both items).

The grader missed it (a hunt found it passing) because it hands lengths only as Python lists (int64 once converted) and
int64/int32 tensors, whose arange never wraps at these sizes; no case has 8-bit lengths.
Caught since by the public uint8 and int8 lengths cases.
"""
import torch


def padding_mask(lengths, max_len):
    lengths = torch.as_tensor(lengths).reshape(-1)
    positions = torch.arange(max_len, dtype=lengths.dtype, device=lengths.device)
    return (positions[None, :] < lengths[:, None])[:, None, :]
