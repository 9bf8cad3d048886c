"""Always normalises over the last dim."""
import torch


def masked_softmax(x, mask, dim=-1):
    scores = x.masked_fill(~mask, float("-inf"))
    row_max = scores.amax(dim=-1, keepdim=True)
    row_max = torch.where(torch.isfinite(row_max), row_max, torch.zeros_like(row_max))
    exps = torch.exp(scores - row_max)
    total = exps.sum(dim=-1, keepdim=True)
    return exps / torch.where(total > 0, total, torch.ones_like(total))


def masked_logsumexp(x, mask, dim=-1):
    scores = x.masked_fill(~mask, float("-inf"))
    lse = torch.logsumexp(scores, dim=dim)
    return torch.where(mask.expand_as(x).any(dim=dim), lse, torch.full_like(lse, float("-inf")))
