"""Fills with the dtype's most negative value and stops there: empty rows are uniform."""
import torch


def masked_softmax(x, mask, dim=-1):
    return torch.softmax(x.masked_fill(~mask, torch.finfo(x.dtype).min), dim=dim)


def masked_logsumexp(x, mask, dim=-1):
    scores = x.masked_fill(~mask, float("-inf"))
    lse = torch.logsumexp(scores, dim=dim)
    return torch.where(mask.expand_as(x).any(dim=dim), lse, torch.full_like(lse, float("-inf")))
