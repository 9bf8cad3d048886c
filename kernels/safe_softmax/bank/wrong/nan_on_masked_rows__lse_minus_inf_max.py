"""The row max of an empty row is -inf, and -inf - -inf is NaN."""
import torch


def masked_softmax(x, mask, dim=-1):
    scores = x.masked_fill(~mask, float("-inf"))
    row_max = scores.amax(dim=dim, keepdim=True)
    row_max = torch.where(torch.isfinite(row_max), row_max, torch.zeros_like(row_max))
    exps = torch.exp(scores - row_max)
    total = exps.sum(dim=dim, keepdim=True)
    return exps / torch.where(total > 0, total, torch.ones_like(total))


def masked_logsumexp(x, mask, dim=-1):
    scores = x.masked_fill(~mask, float("-inf"))
    m = scores.amax(dim=dim, keepdim=True)
    return (m + torch.log(torch.exp(scores - m).sum(dim=dim, keepdim=True))).squeeze(dim)
