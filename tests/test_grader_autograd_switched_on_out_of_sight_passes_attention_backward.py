"""attention_backward ("no autograd") passes a file whose gradients are autograd's: it turns
grad mode on with `torch._C._set_grad_enabled(True)` inside `torch._C.DisableTorchFunction()`,
marks copies of Q, K, V with `t.requires_grad = True` and runs the engine itself
(`Variable._execution_engine.run_backward`). `studyapp grade attention_backward` prints PASS,
"no autograd 19 cases", on every seed tried (7, 1).

The statement promises that "any call made inside torch._C.DisableTorchFunction(), which would
hide them" fails. `HiddenCalls` records aten ops run while torch functions are disabled; a grad
mode switch is no aten op, so the block holds nothing it can see, and what runs outside it (the
attribute setter, the engine's run_backward) is none of `AUTOGRAD_NAMES`. The same file calling
`torch._C._set_grad_enabled(True)` plainly fails "no autograd", as it should."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from grader_helpers import grade_limits

pytest.importorskip("torch")

# autograd of the textbook forward, with grad mode switched on out of the watch's sight
AUTOGRAD_SWITCHED_ON_UNSEEN = """
    import math
    import torch

    _engine = torch.autograd.Variable._execution_engine


    def _grad_mode(on):
        with torch._C.DisableTorchFunction():  # no aten op runs in here: nothing for HiddenCalls
            torch._C._set_grad_enabled(on)


    def attention_backward(Q, K, V, dO, mask=None, scale=None):
        scale = 1 / math.sqrt(Q.shape[-1]) if scale is None else scale
        _grad_mode(True)
        try:
            q, k, v = (t.detach().clone() for t in (Q, K, V))
            for t in (q, k, v):
                t.requires_grad = True
            scores = scale * (q @ k.transpose(-2, -1))
            if mask is not None:
                scores = scores.masked_fill(~mask, float("-inf"))
            weights = torch.nan_to_num(torch.softmax(scores, dim=-1))
            loss = ((weights @ v) * dO).sum()
            grads = _engine.run_backward((loss,), (torch.ones_like(loss),), False, False, (q, k, v), False, False)
        finally:
            _grad_mode(False)
        return tuple(g.detach() for g in grads)
"""


@pytest.mark.parametrize("seed", [7, 1])
def test_autograd_switched_on_inside_disable_torch_function_fails_no_autograd(warm_grader, tmp_path: Path, seed: int):
    path = tmp_path / "learner.py"
    path.write_text(textwrap.dedent(AUTOGRAD_SWITCHED_ON_UNSEEN))
    verdict = warm_grader.grade("attention_backward", path, device="cpu", seed=seed, limits=grade_limits(timeout=30.0))
    row = next(c for c in verdict["checks"] if c["name"] == "no autograd")
    assert verdict["status"] != "pass", verdict["summary"]
    assert row["status"] == "fail", row
