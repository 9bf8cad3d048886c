"""Exponentiates the raw scores: exp(1e4) is inf in float32."""
import torch


def masked_softmax(x, mask, dim=-1):
    exps = torch.exp(x.masked_fill(~mask, float("-inf")))
    return exps / exps.sum(dim=dim, keepdim=True)


def masked_logsumexp(x, mask, dim=-1):
    scores = x.masked_fill(~mask, float("-inf"))
    lse = torch.logsumexp(scores, dim=dim)
    return torch.where(mask.expand_as(x).any(dim=dim), lse, torch.full_like(lse, float("-inf")))
