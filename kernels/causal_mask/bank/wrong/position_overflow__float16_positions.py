"""Wrong because the positions are made in float16, the dtype the mask is returned in (to feed a
half-precision model): float16 holds integers exactly only up to 2048, so from n = 2050 on,
position 2049 rounds to 2048 (2051 to 2052, ...), and query 2048 is allowed to see key 2049 (a
future key); at n = 3000 hundreds of future keys are allowed. E.g. causal_mask(3000).

The grader missed it (a hunt found it passing) because its largest size is n = 2049, whose last position (2048) is still
exact in float16; no case reaches 2050 though the statement allows a few thousand.
Caught since by the public case n=3000.
"""
import torch


def causal_mask(n):
    positions = torch.arange(n, dtype=torch.float16)  # the mask's dtype: 0/1 halves for an fp16 model
    return (positions[None, :] <= positions[:, None]).to(torch.float16)
