"""torch.softmax / torch.logsumexp on a finfo.min fill, then the empty rows set by hand."""
import torch


def masked_softmax(x, mask, dim=-1):
    keep = mask.expand_as(x)
    weights = torch.softmax(x.masked_fill(~keep, torch.finfo(x.dtype).min), dim=dim)
    return weights.masked_fill(~keep, 0.0).masked_fill(~keep.any(dim=dim, keepdim=True), 0.0)


def masked_logsumexp(x, mask, dim=-1):
    keep = mask.expand_as(x)
    lse = torch.logsumexp(x.masked_fill(~keep, torch.finfo(x.dtype).min), dim=dim)
    return lse.masked_fill(~keep.any(dim=dim), float("-inf"))
