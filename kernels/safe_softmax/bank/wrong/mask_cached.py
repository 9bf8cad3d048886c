"""Turns the bool mask into an additive bias (0 kept, -inf blocked) once and keeps it in a dict
keyed by the shapes, dim and dtype, "since a model passes the same padding mask to every layer
and head": later calls with a mask of that shape add the cached bias.

Wrong because the bias of the FIRST mask of a shape is used for every later mask of that shape:
another batch's padding (other lengths, same (B, 1, 1, m) shape) keeps the wrong keys, e.g.
x (2, 3, 4, 9) float32 with padding lengths [9, 4] after a call with lengths [4, 9]: max abs
diff 0.649 in the softmax, 2.21 in the log-sum-exp (/tmp/hunt-gd/scripts/softmax.py).
The grader missed it (a hunt found it passing) because safe_softmax never calls a function on other inputs of the same
shapes (no `AGAIN`): every call of a case passes the same mask, and no two graded cases of one
dtype share x's shape, the mask's shape and dim.
Caught since by the public case "the same shapes, another mask" (mistake mask_cached).
"""
import torch

_BIAS = {}


def _bias(x, mask, dim):
    key = (tuple(x.shape), tuple(mask.shape), dim % x.dim(), x.dtype, x.device)
    if key not in _BIAS:
        _BIAS[key] = torch.zeros(mask.shape, dtype=x.dtype, device=x.device).masked_fill(~mask, float("-inf"))
    return _BIAS[key]


def _shifted_exp(x, mask, dim):
    filled = x + _bias(x, mask, dim)
    row_max = filled.amax(dim, keepdim=True)
    row_max = torch.where(torch.isfinite(row_max), row_max, torch.zeros_like(row_max)).detach()
    exps = torch.exp(filled - row_max)
    return exps, row_max, exps.sum(dim, keepdim=True)


def masked_softmax(x, mask, dim=-1):
    exps, _, total = _shifted_exp(x, mask, dim)
    return exps / torch.where(total > 0, total, torch.ones_like(total))


def masked_logsumexp(x, mask, dim=-1):
    _, row_max, total = _shifted_exp(x, mask, dim)
    nonempty = total > 0
    safe_total = torch.where(nonempty, total, torch.ones_like(total))
    lse = torch.where(nonempty, torch.log(safe_total) + row_max, torch.full_like(total, float("-inf")))
    return lse.squeeze(dim)
