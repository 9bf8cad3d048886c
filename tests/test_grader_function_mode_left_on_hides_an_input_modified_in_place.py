"""An sdpa file that divides its Q in place passes "inputs unchanged" when it leaves a
`TorchFunctionMode` of its own on torch's mode stack (entered at import, never exited).

No function of the harness or of torch is rebound, so `tamper.rebound` finds nothing. The mode
stays on the stack under every mode the harness enters later, and it sees every torch call the
harness makes after the learner's call returns: `export` runs inside
`DisableTorchFunctionSubclass()`, which switches off tensor subclasses only, never function
modes. The mode answers `detach` of the very Q it divided with a copy taken before the division,
so the exported "input as the call left it" is the untouched one, and
`studyapp grade sdpa file.py` prints PASS, "inputs unchanged 29 cases". The same file without
the mode entered fails "inputs unchanged", as it should
(tests/test_grader_input_changed_in_place_hidden_by_the_grading_export.py)."""

from __future__ import annotations

import pytest
from grader_helpers import grade_source

pytest.importorskip("torch")

MUTATION_HIDDEN_BY_A_FUNCTION_MODE = """
    import math
    import torch
    from torch.overrides import TorchFunctionMode

    _before = []  # (the Q the caller handed in, a copy taken before the in-place division)

    class _Hide(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            if getattr(func, "__name__", "") == "detach" and args:
                for tensor, copy in _before:
                    if args[0] is tensor:
                        return copy.clone()
            return func(*args, **(kwargs or {}))

    _Hide().__enter__()  # left on the mode stack, under every mode the harness enters later

    def scaled_dot_product_attention(Q, K, V, mask=None):
        _before.append((Q, Q.clone()))
        Q.div_(math.sqrt(Q.shape[-1]))  # in place: the caller's Q changes
        scores = Q @ K.transpose(-2, -1)
        if mask is not None:
            scores = scores.masked_fill(~mask.bool(), float("-inf"))
        return torch.nan_to_num(torch.softmax(scores, dim=-1), nan=0.0) @ V
"""


def test_a_function_mode_left_on_does_not_hide_an_input_modified_in_place(warm_grader, tmp_path):
    verdict = grade_source(warm_grader, tmp_path, "sdpa", MUTATION_HIDDEN_BY_A_FUNCTION_MODE, timeout=30.0)
    rows = [row for row in verdict["checks"] if row["name"] == "inputs unchanged"]
    assert verdict["status"] != "pass", (verdict["summary"], rows)
