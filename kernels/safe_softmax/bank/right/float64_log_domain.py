"""In float64, the log-sum-exp first, then softmax = exp(x - lse)."""
import torch


def masked_softmax(x, mask, dim=-1):
    x64 = x.to(torch.float64).movedim(dim, -1)
    keep = mask.expand_as(x).movedim(dim, -1)
    lse = masked_logsumexp(x64, keep, dim=-1).unsqueeze(-1)
    lse = torch.where(torch.isfinite(lse), lse, torch.zeros_like(lse))
    weights = torch.exp(x64.masked_fill(~keep, float("-inf")) - lse)
    return weights.movedim(-1, dim).to(x.dtype)


def masked_logsumexp(x, mask, dim=-1):
    x64 = x.to(torch.float64)
    scores = x64.masked_fill(~mask, float("-inf"))
    m = scores.amax(dim=dim, keepdim=True).detach()
    m = torch.where(torch.isfinite(m), m, torch.zeros_like(m))
    total = torch.exp(scores - m).sum(dim=dim, keepdim=True)
    safe = torch.where(total > 0, total, torch.ones_like(total))
    lse = torch.where(total > 0, torch.log(safe) + m, torch.full_like(total, float("-inf")))
    return lse.squeeze(dim).to(x.dtype)
