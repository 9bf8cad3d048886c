"""A block_size buffer of 4096 (a Llama-2-style context length), sliced to n.

Wrong because past 4096 the slice is still (4096, 4096): causal_mask(5000) returns a
(4096, 4096) mask instead of (5000, 5000) (used as scores.masked_fill(mask == 0, ...) on
(5000, 5000) scores it raises; 5000 is "a few thousand", which the statement allows;
/tmp/hunt-gd/scripts/causal.py).
The grader misses it because its largest n is 3000: the buffers it reaches past stop at 2048.
"""
import torch

BLOCK_SIZE = 4096
bias = torch.tril(torch.ones(BLOCK_SIZE, BLOCK_SIZE, dtype=torch.bool))


def causal_mask(n):
    return bias[:n, :n].clone()
