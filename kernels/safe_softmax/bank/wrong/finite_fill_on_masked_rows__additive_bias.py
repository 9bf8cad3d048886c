"""Adds a -1e9 bias to the blocked scores: an empty row is the softmax of its blocked scores."""
import torch


def masked_softmax(x, mask, dim=-1):
    return torch.softmax(x + (~mask).to(x.dtype) * -1e9, dim=dim)


def masked_logsumexp(x, mask, dim=-1):
    lse = torch.logsumexp(x.masked_fill(~mask, float("-inf")), dim=dim)
    return torch.where(mask.expand_as(x).any(dim=dim), lse, torch.full_like(lse, float("-inf")))
