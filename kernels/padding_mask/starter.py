"""Drill: padding mask.

Write `padding_mask(lengths, max_len)`.

- lengths: a 1-D tensor or a list with each sequence's true length (batch of sequences padded
  to max_len).
- Return a mask (bool or 0/1) that broadcasts to (batch, max_len, max_len), typically
  (batch, 1, max_len); (batch, 1, 1, max_len) is accepted too. It is True/1 where the KEY
  position is < that sequence's length and False/0 for padding keys (position >= length).
- Rows of padding queries are not graded.
- Lengths differ per item and go past 128 and 256, max_len up to a few hundred (no fixed-size
  buffer, no int8/uint8 positions). Build it on the default device or on lengths' device.

Grade it with: studyapp grade padding_mask <this file>
"""

import torch


def padding_mask(lengths, max_len):
    raise NotImplementedError("build the padding mask here")
