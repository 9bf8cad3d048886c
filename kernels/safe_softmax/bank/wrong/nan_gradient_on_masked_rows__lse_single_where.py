"""One where around log(0): the forward is -inf, the backward 0 * inf."""
import torch


def masked_softmax(x, mask, dim=-1):
    scores = x.masked_fill(~mask, float("-inf"))
    row_max = scores.amax(dim=dim, keepdim=True)
    row_max = torch.where(torch.isfinite(row_max), row_max, torch.zeros_like(row_max))
    exps = torch.exp(scores - row_max)
    total = exps.sum(dim=dim, keepdim=True)
    return exps / torch.where(total > 0, total, torch.ones_like(total))


def masked_logsumexp(x, mask, dim=-1):
    m = x.masked_fill(~mask, float("-inf")).amax(dim=dim, keepdim=True)
    m = torch.where(torch.isfinite(m), m, torch.zeros_like(m))
    total = (torch.exp(x - m) * mask).sum(dim=dim, keepdim=True)
    lse = torch.where(total > 0, torch.log(total) + m, torch.full_like(total, float("-inf")))
    return lse.squeeze(dim)
