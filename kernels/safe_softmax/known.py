"""The known mistakes of masked softmax / log-sum-exp, re-enacted as learners write them.

Each variant runs in the case's dtype (precision IS the mistake for several of them) on the
case's inputs, with autograd, in the trusted parent; the judge names the mistake whose
outputs (and gradients) are the learner's. A mistake has a softmax variant, a log-sum-exp
variant, or both. A -1e9 fill overflowing float16 is not here: it raises, and the judge reads
that from the error.
"""

from __future__ import annotations

from collections.abc import Callable

import torch

NEG_INF = float("-inf")
Variant = Callable[[torch.Tensor, torch.Tensor, int], torch.Tensor]


def _safe_max(filled: torch.Tensor, dim: int) -> torch.Tensor:
    row_max = filled.amax(dim, keepdim=True)
    return torch.where(torch.isfinite(row_max), row_max, torch.zeros_like(row_max))


def safe_softmax(x, mask, dim):
    """Right: mask before exp, kept max, a finite denominator on empty rows."""
    filled = x.masked_fill(~mask, NEG_INF)
    exps = torch.exp(filled - _safe_max(filled, dim))
    total = exps.sum(dim, keepdim=True)
    return exps / torch.where(total > 0, total, torch.ones_like(total))


def safe_logsumexp(x, mask, dim):
    """Right: the double where keeps log's argument finite on empty rows."""
    filled = x.masked_fill(~mask, NEG_INF)
    row_max = _safe_max(filled, dim)
    total = torch.exp(filled - row_max).sum(dim, keepdim=True)
    safe = torch.where(total > 0, total, torch.ones_like(total))
    return torch.where(total > 0, torch.log(safe) + row_max, torch.full_like(total, NEG_INF)).squeeze(dim)


def builtin_softmax(x, mask, dim):
    """Right, another way: finfo.min fill, torch.softmax, then zero the empty rows."""
    scores = x.masked_fill(~mask, torch.finfo(x.dtype).min)
    return torch.softmax(scores, dim) * mask.expand(x.shape).any(dim, keepdim=True)


def builtin_logsumexp(x, mask, dim):
    lse = torch.logsumexp(x.masked_fill(~mask, NEG_INF), dim)
    return torch.where(mask.expand(x.shape).any(dim), lse, torch.full_like(lse, NEG_INF))


# --- the mistakes --------------------------------------------------------------------------
def _no_max_fill(x, mask, dim):
    exps = torch.exp(x.masked_fill(~mask, NEG_INF))
    return exps / exps.sum(dim, keepdim=True)


def _no_max_multiply(x, mask, dim):
    exps = torch.exp(x) * mask
    return exps / exps.sum(dim, keepdim=True)


def _no_max_guarded(x, mask, dim):
    exps = torch.exp(x.masked_fill(~mask, NEG_INF))
    total = exps.sum(dim, keepdim=True)
    return torch.where(total > 0, exps / total, torch.zeros_like(exps))


def _no_max_lse(x, mask, dim):
    return torch.log(torch.exp(x.masked_fill(~mask, NEG_INF)).sum(dim))


def _no_max_lse_multiply(x, mask, dim):
    return torch.log((torch.exp(x) * mask).sum(dim))


def _nan_rows_builtin(x, mask, dim):
    return torch.softmax(x.masked_fill(~mask, NEG_INF), dim)


def _nan_rows_manual(x, mask, dim):
    filled = x.masked_fill(~mask, NEG_INF)
    exps = torch.exp(filled - filled.amax(dim, keepdim=True))
    return exps / exps.sum(dim, keepdim=True)


def _nan_rows_lse(x, mask, dim):
    filled = x.masked_fill(~mask, NEG_INF)
    row_max = filled.amax(dim, keepdim=True)
    return (torch.log(torch.exp(filled - row_max).sum(dim, keepdim=True)) + row_max).squeeze(dim)


def _nan_grad_where_after_exp(x, mask, dim):
    row_max = x.masked_fill(~mask, NEG_INF).amax(dim, keepdim=True)
    exps = torch.where(mask, torch.exp(x - row_max), torch.zeros_like(x))
    total = exps.sum(dim, keepdim=True)
    return torch.where(total > 0, exps / total, torch.zeros_like(exps))


def _nan_grad_lse_single_where(x, mask, dim):
    row_max = _safe_max(x.masked_fill(~mask, NEG_INF), dim)
    total = (torch.exp(x - row_max) * mask).sum(dim, keepdim=True)
    return torch.where(total > 0, torch.log(total) + row_max, torch.full_like(total, NEG_INF)).squeeze(dim)


def _finite_fill(value):
    def softmax(x, mask, dim):
        fill = torch.finfo(x.dtype).min if value == "finfo" else value
        return torch.softmax(x.masked_fill(~mask, fill), dim)

    def logsumexp(x, mask, dim):
        fill = torch.finfo(x.dtype).min if value == "finfo" else value
        return torch.logsumexp(x.masked_fill(~mask, fill), dim)

    return softmax, logsumexp


def _additive_softmax(x, mask, dim):
    return torch.softmax(x + (~mask).to(x.dtype) * -1e9, dim)


def _additive_logsumexp(x, mask, dim):
    return torch.logsumexp(x + (~mask).to(x.dtype) * -1e9, dim)


def _inverted(right):
    return lambda x, mask, dim: right(x, ~mask, dim)


def _lse_no_add_back(x, mask, dim):
    filled = x.masked_fill(~mask, NEG_INF)
    row_max = _safe_max(filled, dim)
    total = torch.exp(filled - row_max).sum(dim, keepdim=True)
    safe = torch.where(total > 0, total, torch.ones_like(total))
    return torch.where(total > 0, torch.log(safe), torch.full_like(total, NEG_INF)).squeeze(dim)


def _last_dim(right):
    return lambda x, mask, dim: right(x, mask, -1)


def _squeezed_lse(x, mask, dim):
    """The right log-sum-exp, ended by a bare `.squeeze()`: every other size-1 dim goes too."""
    kept = safe_logsumexp(x, mask, dim).unsqueeze(dim if dim >= 0 else dim + x.dim())
    return kept.squeeze()


def _max_all_guarded(x, mask, dim):
    exps = torch.exp(x - x.amax(dim, keepdim=True)) * mask
    total = exps.sum(dim, keepdim=True)
    return exps / torch.where(total > 0, total, torch.ones_like(total))


def _max_all_unguarded(x, mask, dim):
    exps = torch.exp(x - x.amax(dim, keepdim=True)).masked_fill(~mask, 0.0)
    return exps / exps.sum(dim, keepdim=True)


def _max_all_lse(x, mask, dim):
    row_max = x.amax(dim, keepdim=True)
    total = (torch.exp(x - row_max) * mask).sum(dim, keepdim=True)
    return (torch.log(total) + row_max).squeeze(dim)


_fill_1e9, _fill_1e9_lse = _finite_fill(-1e9)
_fill_finfo, _fill_finfo_lse = _finite_fill("finfo")

SOFTMAX_MISTAKES: list[tuple[str, Variant]] = [
    ("no_max_subtraction", _no_max_fill), ("no_max_subtraction", _no_max_multiply),
    ("no_max_subtraction", _no_max_guarded),
    ("nan_on_masked_rows", _nan_rows_builtin), ("nan_on_masked_rows", _nan_rows_manual),
    ("nan_gradient_on_masked_rows", _nan_grad_where_after_exp),
    ("finite_fill_on_masked_rows", _fill_1e9), ("finite_fill_on_masked_rows", _fill_finfo),
    ("finite_fill_on_masked_rows", _additive_softmax),
    ("inverted_mask", _inverted(safe_softmax)),
    ("wrong_dim", _last_dim(safe_softmax)),
    ("max_over_masked_entries", _max_all_guarded), ("max_over_masked_entries", _max_all_unguarded),
    ("mask_cached", safe_softmax),  # right, on the case before's mask (`EARLIER_MASK`)
]
"""(mistake, masked_softmax as that mistake writes it), most specific first."""

LSE_MISTAKES: list[tuple[str, Variant]] = [
    ("no_max_subtraction", _no_max_lse), ("no_max_subtraction", _no_max_lse_multiply),
    ("nan_on_masked_rows", _nan_rows_lse),
    ("nan_gradient_on_masked_rows", _nan_grad_lse_single_where),
    ("finite_fill_on_masked_rows", _fill_1e9_lse), ("finite_fill_on_masked_rows", _fill_finfo_lse),
    ("finite_fill_on_masked_rows", _additive_logsumexp),
    ("inverted_mask", _inverted(safe_logsumexp)),
    ("lse_without_max", _lse_no_add_back),
    ("wrong_dim", _last_dim(safe_logsumexp)),
    ("lse_squeezes_every_dim", _squeezed_lse),
    ("max_over_masked_entries", _max_all_lse),
    ("mask_cached", safe_logsumexp),
]
"""(mistake, masked_logsumexp as that mistake writes it), most specific first."""

EARLIER_MASK = "the mask of the case before"
"""Payload key of a case graded right after one of the same shapes, dim and dtype with another
mask: what a `mask_cached` mistake answers with (a -inf bias or the empty rows cached by shape)."""
