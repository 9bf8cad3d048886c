"""torch.softmax / torch.logsumexp on a finfo.min fill, the empty rows found with `mask.any(dim)`.

Wrong because `mask.any(dim=dim)` runs on the mask as given, not broadcast to x: when the mask
has fewer dims than x (allowed: "a bool tensor that broadcasts to x") and `dim` is given as a
non-negative index, `dim` names another axis of the mask than of x. The empty slices of
masked_logsumexp are then looked up along the wrong axis: an empty slice keeps the huge
finite logsumexp of finfo.min (and a uniform gradient), a non-empty one becomes -inf.
The grader misses it because every case with dim != -1 (public "dim=1 of (B, n, m)", "dim=0",
"dim=-2, transposed x", "rows of 257 along dim=1", and the fresh ones) uses a full-shape mask;
the lower-rank masks (causal (n, n), padding (B, 1, 1, m)) only come with dim=-1.
Shows on: x (2, 5, 5) float64, mask (5, 5) with row 0 all False and column 4 all False, dim=1
(see /tmp/hunt-ga/safe_softmax_any_dim.py).
"""
import torch


def masked_softmax(x, mask, dim=-1):
    weights = torch.softmax(x.masked_fill(~mask, torch.finfo(x.dtype).min), dim=dim)
    return weights.masked_fill(~mask, 0.0).masked_fill(~mask.any(dim=dim, keepdim=True), 0.0)


def masked_logsumexp(x, mask, dim=-1):
    lse = torch.logsumexp(x.masked_fill(~mask, torch.finfo(x.dtype).min), dim=dim)
    return lse.masked_fill(~mask.any(dim=dim), float("-inf"))
