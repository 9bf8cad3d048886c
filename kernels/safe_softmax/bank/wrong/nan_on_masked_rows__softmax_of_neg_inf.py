"""torch.softmax of a row that is all -inf is NaN."""
import torch


def masked_softmax(x, mask, dim=-1):
    return torch.softmax(x.masked_fill(~mask, float("-inf")), dim=dim)


def masked_logsumexp(x, mask, dim=-1):
    scores = x.masked_fill(~mask, float("-inf"))
    lse = torch.logsumexp(scores, dim=dim)
    return torch.where(mask.expand_as(x).any(dim=dim), lse, torch.full_like(lse, float("-inf")))
