"""Masks with a where AFTER exp: zeros forward, NaN backward."""
import torch


def masked_softmax(x, mask, dim=-1):
    row_max = x.masked_fill(~mask, float("-inf")).amax(dim=dim, keepdim=True)
    exps = torch.where(mask, torch.exp(x - row_max), torch.zeros_like(x))
    total = exps.sum(dim=dim, keepdim=True)
    return torch.where(total > 0, exps / total, torch.zeros_like(exps))


def masked_logsumexp(x, mask, dim=-1):
    scores = x.masked_fill(~mask, float("-inf"))
    lse = torch.logsumexp(scores, dim=dim)
    return torch.where(mask.expand_as(x).any(dim=dim), lse, torch.full_like(lse, float("-inf")))
