"""Right in float32/64, but -1e9 does not fit float16."""
import torch


def masked_softmax(x, mask, dim=-1):
    weights = torch.softmax(x.masked_fill(~mask, -1e9), dim=dim)
    return weights * mask.expand_as(x).any(dim=dim, keepdim=True)


def masked_logsumexp(x, mask, dim=-1):
    lse = torch.logsumexp(x.masked_fill(~mask, -1e9), dim=dim)
    return torch.where(mask.expand_as(x).any(dim=dim), lse, torch.full_like(lse, float("-inf")))
