"""The row max includes the blocked entries."""
import torch


def masked_softmax(x, mask, dim=-1):
    exps = torch.exp(x - x.amax(dim=dim, keepdim=True)) * mask
    total = exps.sum(dim=dim, keepdim=True)
    return exps / torch.where(total > 0, total, torch.ones_like(total))


def masked_logsumexp(x, mask, dim=-1):
    scores = x.masked_fill(~mask, float("-inf"))
    lse = torch.logsumexp(scores, dim=dim)
    return torch.where(mask.expand_as(x).any(dim=dim), lse, torch.full_like(lse, float("-inf")))
