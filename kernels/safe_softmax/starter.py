"""Safe masked softmax and log-sum-exp (see the statement for the exact contract).

mask is bool and broadcasts to x: True = keep. A row with nothing kept gives zeros (softmax)
and -inf (log-sum-exp), and a finite, zero gradient.
"""

import torch


def masked_softmax(x, mask, dim=-1):
    """Softmax of x over `dim`, over the kept entries only; same shape and dtype as x."""
    raise NotImplementedError


def masked_logsumexp(x, mask, dim=-1):
    """log(sum(exp(x))) over the kept entries of `dim`, with `dim` removed; -inf if none is kept."""
    raise NotImplementedError
