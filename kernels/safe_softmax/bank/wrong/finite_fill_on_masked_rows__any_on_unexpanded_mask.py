"""torch.softmax / torch.logsumexp on a finfo.min fill, the empty rows found with `mask.any(dim)`.

Wrong because `mask.any(dim=dim)` runs on the mask as given, not broadcast to x: when the mask
has fewer dims than x (allowed: "a bool tensor that broadcasts to x") and `dim` is given as a
non-negative index, `dim` names another axis of the mask than of x. A slice of x with no kept
entry is then not found: it keeps the finite fill's uniform weights and huge negative
log-sum-exp, while a slice with kept entries may be zeroed (-inf). Caught by the public case
"(n, n) mask shared by the batch, dim=1" and fresh cases with a shared mask (a hunt found it
passing when every case with dim != -1 had a full-shape mask).
"""
import torch


def masked_softmax(x, mask, dim=-1):
    weights = torch.softmax(x.masked_fill(~mask, torch.finfo(x.dtype).min), dim=dim)
    return weights.masked_fill(~mask, 0.0).masked_fill(~mask.any(dim=dim, keepdim=True), 0.0)


def masked_logsumexp(x, mask, dim=-1):
    lse = torch.logsumexp(x.masked_fill(~mask, torch.finfo(x.dtype).min), dim=dim)
    return lse.masked_fill(~mask.any(dim=dim), float("-inf"))
