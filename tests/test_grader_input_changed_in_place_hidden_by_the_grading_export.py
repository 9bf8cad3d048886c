"""An sdpa file that divides its Q in place passes "inputs unchanged" once it swaps the
`export` of the harness's `grading` module (found in sys.modules, no frames walked).

`tests/test_grader_results_forged_in_the_child.py` swaps `tensor_drill.export`, which exports
the call's result only; the inputs a call leaves behind are exported by `inputs_as_left`, which
calls `grading.export`. Swapping that one makes the in-place division look untouched, and the
wrong file passes (`studyapp grade sdpa file.py` prints PASS, "inputs unchanged 25 cases").
Patching `torch.Tensor.detach`, which `export` calls first, does the same without touching any
harness module: the check that an input is unchanged is made of what the child exports."""

from __future__ import annotations

from pathlib import Path

import pytest
from grader_helpers import grade_source

pytest.importorskip("torch")

# divides Q in place (the caller's Q changes); the harness's grading.export hands back a copy
# of Q taken before the division whenever it is asked to export that very tensor
MUTATION_HIDDEN_BY_GRADING_EXPORT = """
    import math, sys, torch
    _grading = next(m for name, m in list(sys.modules.items())
                    if name.endswith(".grading") and hasattr(m, "inputs_as_left"))
    _export = _grading.export
    _before = []
    def _lying_export(value, *rest):
        for tensor, copy in _before:
            if value is tensor:
                return _export(copy, *rest)
        return _export(value, *rest)
    _grading.export = _lying_export
    def scaled_dot_product_attention(Q, K, V, mask=None):
        _before[:] = [(Q, Q.clone())]
        Q /= math.sqrt(Q.shape[-1])
        scores = Q @ K.transpose(-2, -1)
        if mask is not None:
            scores = scores.masked_fill(mask == 0, float("-inf"))
        return torch.nan_to_num(torch.softmax(scores, -1)) @ V
"""

# the same, through torch itself: `torch.Tensor.detach` (which `export` calls first) hands back
# the copy taken before the division for that very tensor; no harness module is touched
MUTATION_HIDDEN_BY_DETACH = """
    import math, torch
    _detach = torch.Tensor.detach
    _before = []
    def _lying_detach(self):
        for tensor, copy in _before:
            if self is tensor:
                return _detach(copy)
        return _detach(self)
    torch.Tensor.detach = _lying_detach
    def scaled_dot_product_attention(Q, K, V, mask=None):
        _before[:] = [(Q, Q.clone())]
        Q /= math.sqrt(Q.shape[-1])
        scores = Q @ K.transpose(-2, -1)
        if mask is not None:
            scores = scores.masked_fill(mask == 0, float("-inf"))
        return torch.nan_to_num(torch.softmax(scores, -1)) @ V
"""

# the same division in place, with no swap: the grader fails it on "inputs unchanged"
MUTATION_PLAIN = """
    import math, torch
    def scaled_dot_product_attention(Q, K, V, mask=None):
        Q /= math.sqrt(Q.shape[-1])
        scores = Q @ K.transpose(-2, -1)
        if mask is not None:
            scores = scores.masked_fill(mask == 0, float("-inf"))
        return torch.nan_to_num(torch.softmax(scores, -1)) @ V
"""


def _grade(grader, tmp_path: Path, source: str) -> dict:
    return grade_source(grader, tmp_path, "sdpa", source, timeout=30.0)


def _row(verdict: dict, name: str) -> dict:
    return next(row for row in verdict["checks"] if row["name"] == name)


def test_the_plain_in_place_division_fails_inputs_unchanged(warm_grader, tmp_path):
    verdict = _grade(warm_grader, tmp_path, MUTATION_PLAIN)
    assert verdict["status"] == "fail", verdict
    assert _row(verdict, "inputs unchanged")["status"] == "fail", verdict["checks"]


def _caught(verdict: dict) -> bool:
    """Failed on "inputs unchanged", or rejected for changing the harness it ran beside."""
    rows = [row for row in verdict["checks"] if row["name"] == "inputs unchanged"]
    return "changed the grader's harness" in verdict["summary"] or bool(rows and rows[0]["status"] != "pass")


def test_swapping_the_grading_modules_export_does_not_hide_an_input_modified_in_place(warm_grader, tmp_path):
    verdict = _grade(warm_grader, tmp_path, MUTATION_HIDDEN_BY_GRADING_EXPORT)
    assert verdict["status"] != "pass", verdict
    assert _caught(verdict), (verdict["summary"], verdict["checks"])


def test_patching_tensor_detach_does_not_hide_an_input_modified_in_place(warm_grader, tmp_path):
    verdict = _grade(warm_grader, tmp_path, MUTATION_HIDDEN_BY_DETACH)
    assert verdict["status"] != "pass", verdict
    assert _caught(verdict), (verdict["summary"], verdict["checks"])
