"""attention_backward passes, "no autograd" included, a file whose call returns placeholders (a
Tensor subclass of zeros) and computes the real gradients, with autograd, when the harness
exports them: the subclass's `__torch_function__` answers the harness's `value.detach()` with
autograd's gradients. `studyapp grade attention_backward` prints PASS.

The watches (`AutogradWatch`, `HiddenCalls`, `torch.no_grad()`) cover the call only; the harness
exports its return value after the `with` block, so whatever a returned object's methods run
during `export` runs unwatched, with grad mode back on. `export` makes the tensor plain
(`as_subclass(torch.Tensor)`), so the parent's "Tensor subclass crossed back" check never sees
the subclass. The same works for flash_attention's watch (a fused call, or the whole score
matrix, made at export)."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from grader_helpers import grade_limits

pytest.importorskip("torch")

# placeholders whose detach() runs autograd of the textbook forward
GRADIENTS_MADE_AT_EXPORT = """
    import math
    import torch


    def _gradients(Q, K, V, dO, mask, scale):
        q, k, v = (t.detach().clone().requires_grad_() for t in (Q, K, V))
        scores = scale * (q @ k.transpose(-2, -1))
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        weights = torch.nan_to_num(torch.softmax(scores, dim=-1))
        ((weights @ v) * dO).sum().backward()
        return q.grad.detach(), k.grad.detach(), v.grad.detach()


    class Later(torch.Tensor):
        # a placeholder returned by the call; its values are made when the grader exports it

        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            if func is torch.Tensor.detach and isinstance(args[0], Later):
                box = args[0]._box
                if "grads" not in box:
                    box["grads"] = _gradients(*box["inputs"])
                return box["grads"][args[0]._index]
            with torch._C.DisableTorchFunctionSubclass():
                return func(*args, **(kwargs or {}))


    def attention_backward(Q, K, V, dO, mask=None, scale=None):
        scale = 1 / math.sqrt(Q.shape[-1]) if scale is None else scale
        box = {"inputs": (Q.detach().clone(), K.detach().clone(), V.detach().clone(), dO.detach().clone(), mask, scale)}
        out = []
        for index, like in enumerate((Q, K, V)):
            later = torch.Tensor._make_subclass(Later, torch.zeros_like(like))
            later._box, later._index = box, index
            out.append(later)
        return tuple(out)
"""


def test_gradients_made_when_the_harness_exports_them_fail_no_autograd(warm_grader, tmp_path: Path):
    path = tmp_path / "learner.py"
    path.write_text(textwrap.dedent(GRADIENTS_MADE_AT_EXPORT))
    verdict = warm_grader.grade("attention_backward", path, device="cpu", seed=7, limits=grade_limits(timeout=30.0))
    assert verdict["status"] != "pass", (verdict["summary"], [(c["name"], c["status"]) for c in verdict["checks"]])
