"""Mask before exp, subtract the kept max, and give every discarded branch a finite value."""

import torch


def _shifted_exp(x, mask, dim):
    """exp(x - kept row max) with blocked entries exactly 0, the row max, and the row sum."""
    filled = x.masked_fill(~mask, float("-inf"))  # backward: exactly 0 at blocked entries
    row_max = filled.amax(dim, keepdim=True)
    row_max = torch.where(torch.isfinite(row_max), row_max, torch.zeros_like(row_max))  # empty rows
    exps = torch.exp(filled - row_max)
    return exps, row_max, exps.sum(dim, keepdim=True)


def masked_softmax(x, mask, dim=-1):
    exps, _, total = _shifted_exp(x, mask, dim)
    return exps / torch.where(total > 0, total, torch.ones_like(total))  # empty rows: 0 / 1


def masked_logsumexp(x, mask, dim=-1):
    _, row_max, total = _shifted_exp(x, mask, dim)
    nonempty = total > 0
    safe_total = torch.where(nonempty, total, torch.ones_like(total))  # log(1): no inf to backprop
    lse = torch.where(nonempty, torch.log(safe_total) + row_max, torch.full_like(total, float("-inf")))
    return lse.squeeze(dim)
