"""Drill: apply rotary position embedding (RoPE).

Write `apply_rope(x, offset=0, base=10000.0, interleaved=False)`.

- x: (B, H, n, d) queries or keys, one head per dim-1 slot, positions along dim 2; d is even.
- The token at index t of dim 2 is at position offset + t (offset > 0 when decoding with a
  KV cache: the new tokens come after the cached ones).
- Pair i (i = 0 .. d/2 - 1) turns by angle position * base ** (-2i / d).
- interleaved=True: the pairs are (x0, x1), (x2, x3), ... (RoFormer, GPT-J, Meta's LLaMA code).
  interleaved=False: the pairs are (x_i, x_{i + d/2}) (GPT-NeoX, HF transformers' rotate_half).
- A pair (a, b) turned by angle t becomes (a cos t - b sin t, a sin t + b cos t).
- Return a tensor shaped like x, in x's dtype and on its device; don't modify x.
- Compute the angles in float32 at least (float64 for float64 x): past position 2048 float16
  cannot even hold the positions. A float16 case past position 2048 is graded.
- Make every tensor on x.device; never name a device. Any torch op is allowed.

Grade it with: studyapp grade rope <this file>
"""

import torch


def apply_rope(x, offset=0, base=10000.0, interleaved=False):
    raise NotImplementedError("write RoPE here")
