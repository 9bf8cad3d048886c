"""attention_backward ("no autograd") passes a file whose gradients are autograd's: inside its
call it pops every mode off torch's function-mode stack (`torch._C._pop_torch_function_stack()`,
which takes the grader's `AutogradWatch` off), runs `torch.enable_grad()` and
`torch.autograd.grad` on the textbook forward, and pushes the modes back
(`torch._C._push_on_torch_function_stack`) before it returns. The watch sees none of it, no
function is rebound (`tamper.rebound`), no aten op runs inside `DisableTorchFunction()`
(`HiddenCalls`), and the harness finds its watch where it left it. `studyapp grade
attention_backward file.py` prints PASS, "no autograd 20 cases"; the same file without the
pop and push fails "no autograd", as it should."""

from __future__ import annotations

import pytest
from grader_helpers import grade_source

pytest.importorskip("torch")

AUTOGRAD_WITH_THE_WATCH_SET_ASIDE = """
    import math
    import torch

    def attention_backward(Q, K, V, dO, mask=None, scale=None):
        scale = 1 / math.sqrt(Q.shape[-1]) if scale is None else scale
        popped = []
        while torch._C._len_torch_function_stack() > 0:  # the grader's watches, set aside
            popped.append(torch._C._pop_torch_function_stack())
        try:
            with torch.enable_grad():
                work = torch.promote_types(Q.dtype, torch.float32)
                q, k, v = (t.detach().to(work).clone().requires_grad_() for t in (Q, K, V))
                scores = q @ k.transpose(-2, -1) * scale
                if mask is not None:
                    scores = scores.masked_fill(~mask, float("-inf"))
                p = torch.nan_to_num(torch.softmax(scores, dim=-1), nan=0.0)
                dq, dk, dv = torch.autograd.grad(p @ v, (q, k, v), dO.to(work))
        finally:
            for mode in reversed(popped):  # back as they were, before the harness looks
                torch._C._push_on_torch_function_stack(mode)
        return dq.to(Q.dtype), dk.to(K.dtype), dv.to(V.dtype)
"""


@pytest.mark.xfail(strict=True, reason=(
    "known gap: learner code can take the grader's watches off torch's mode stack during its call and put "
    "them back (as it can reach the harness's objects through its frames); the README says what remains"))
def test_popping_the_watch_off_the_mode_stack_does_not_hide_autograd(warm_grader, tmp_path):
    verdict = grade_source(warm_grader, tmp_path, "attention_backward", AUTOGRAD_WITH_THE_WATCH_SET_ASIDE,
                           timeout=30.0)
    rows = [row for row in verdict["checks"] if row["name"] == "no autograd"]
    assert verdict["status"] != "pass", (verdict["summary"], rows)
