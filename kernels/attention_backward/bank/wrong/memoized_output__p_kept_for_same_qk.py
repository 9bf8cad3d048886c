"""Keeps the last call's P with the Q and K it came from, "like a saved activation": a backward
called again on the same Q and K (gradient accumulation, a second loss) skips the recompute.
It checks that Q and K are the same tensors (`is`), but P also depends on the mask and the scale.

Wrong because a call on the same Q and K objects with another mask or scale reuses the old P:
attention_backward(Q, K, V, dO) then attention_backward(Q, K, V, dO, mask=causal) returns the
unmasked gradients for the second call (Q, K, V, dO (2, 6, 4) float64, causal mask (6, 6): max abs diff
1.46; scale=0.1 after the default: 0.83; /tmp/hunt-gd/scripts/backward.py).
The grader missed it (a hunt found it passing) because it clones every input for every call (`clone_tree`), so no call
is ever handed the tensor objects an earlier one got: the saved P is never reused there.
Caught since by the public cases called again on the same tensors with a causal mask, and with scale 0.1 (SAME_TENSORS).
"""
import math

import torch

_saved = {}


def attention_backward(Q, K, V, dO, mask=None, scale=None):
    if scale is None:
        scale = 1 / math.sqrt(Q.shape[-1])
    work = torch.promote_types(Q.dtype, torch.float32)
    q, k, v, do = (t.to(work) for t in (Q, K, V, dO))
    if _saved.get("Q") is Q and _saved.get("K") is K:
        p = _saved["P"]
    else:
        scores = q @ k.transpose(-2, -1) * scale
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        p = torch.nan_to_num(torch.softmax(scores, dim=-1), nan=0.0)
        _saved.update(Q=Q, K=K, P=p)
    dv = p.transpose(-2, -1) @ do
    dp = do @ v.transpose(-2, -1)
    ds = p * (dp - (dp * p).sum(dim=-1, keepdim=True))
    dq = ds @ k * scale
    dk = ds.transpose(-2, -1) @ q * scale
    return dq.to(Q.dtype), dk.to(K.dtype), dv.to(V.dtype)
