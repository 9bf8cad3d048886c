"""An sdpa file that divides its Q in place passes "inputs unchanged" by patching
`torch.Tensor.detach` (as tests/test_grader_input_changed_in_place_hidden_by_the_grading_export.py
does, which the grader rejects as "changed the grader's harness or torch") once it sets its
replacement's `__module__` to "torch._tensor".

`tamper.rebound` lets a name hold another value when that value's `__module__` is torch's
(`_torchs_own`: importing `torch.func` rewraps `torch.manual_seed`, say), and `__module__` of
a learner's function is a plain attribute it can set to anything. The harness's `export` calls
the patched `detach` on the divided Q, gets a copy taken before the division, and
`studyapp grade sdpa file.py` prints PASS, "inputs unchanged 29 cases"."""

from __future__ import annotations

import pytest
from grader_helpers import grade_source

pytest.importorskip("torch")

MUTATION_HIDDEN_BY_A_DETACH_NAMED_AS_TORCHS = """
    import math, torch
    _detach = torch.Tensor.detach
    _before = []
    def _lying_detach(self):
        for tensor, copy in _before:
            if self is tensor:
                return _detach(copy)
        return _detach(self)
    _lying_detach.__module__ = "torch._tensor"  # looks like torch's own rebinding
    torch.Tensor.detach = _lying_detach
    def scaled_dot_product_attention(Q, K, V, mask=None):
        _before[:] = [(Q, Q.clone())]
        Q /= math.sqrt(Q.shape[-1])
        scores = Q @ K.transpose(-2, -1)
        if mask is not None:
            scores = scores.masked_fill(mask == 0, float("-inf"))
        return torch.nan_to_num(torch.softmax(scores, -1)) @ V
"""


def test_a_patch_claiming_torchs_module_does_not_hide_an_input_modified_in_place(warm_grader, tmp_path):
    verdict = grade_source(warm_grader, tmp_path, "sdpa", MUTATION_HIDDEN_BY_A_DETACH_NAMED_AS_TORCHS, timeout=30.0)
    rows = [row for row in verdict["checks"] if row["name"] == "inputs unchanged"]
    assert verdict["status"] != "pass", (verdict["summary"], rows)
