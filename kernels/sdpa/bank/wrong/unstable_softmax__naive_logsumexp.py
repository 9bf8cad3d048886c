"""Log-domain softmax with a hand-written log-sum-exp that overflows: log(sum(exp(scores)))."""
import math

import torch


def scaled_dot_product_attention(Q, K, V, mask=None):
    scores = Q @ K.transpose(-2, -1) / math.sqrt(Q.shape[-1])
    if mask is not None:
        scores = scores.masked_fill(mask == 0, float("-inf"))
    log_total = torch.log(torch.exp(scores).sum(dim=-1, keepdim=True))
    return torch.exp(scores - log_total) @ V
