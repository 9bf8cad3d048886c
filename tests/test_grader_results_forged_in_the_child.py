"""Learner code in the child forging what the harness records: swapping a harness global
(`export`, found in sys.modules) so an input modified in place looks untouched, or marking the
results collected so far as a missing function's. Neither may pass, and the second must be the
learner's failure, never the grader's error with its traceback."""

from __future__ import annotations

from pathlib import Path

import pytest
from grader_helpers import grade_source

pytest.importorskip("torch")

# divides Q in place (the caller's Q changes), and swaps the harness's `export` (a global of
# kernels.tensor_drill, found in sys.modules) for one that exports the input as it was
MUTATION_HIDDEN_BY_EXPORT = """
    import math, sys, torch
    _drill = next(m for name, m in list(sys.modules.items()) if name.endswith(".tensor_drill"))
    _export = _drill.export
    _before = []
    def _lying_export(value, *rest):
        for tensor, copy in _before:
            if value is tensor:
                return _export(copy, *rest)
        return _export(value, *rest)
    _drill.export = _lying_export
    def scaled_dot_product_attention(Q, K, V, mask=None):
        _before[:] = [(Q, Q.clone())]
        Q /= math.sqrt(Q.shape[-1])
        scores = Q @ K.transpose(-2, -1)
        if mask is not None:
            scores = scores.masked_fill(mask == 0, float("-inf"))
        return torch.nan_to_num(torch.softmax(scores, -1)) @ V
"""

# wrong code (returns Q) that marks every result collected so far as a "missing function" one:
# harness_altered then lets them through and the judge reads a result with no calls
RESULTS_MARKED_MISSING = """
    import sys
    def scaled_dot_product_attention(Q, K, V, mask=None):
        frame = sys._getframe()
        while frame is not None:
            results = frame.f_locals.get("results")
            if isinstance(results, dict):
                for key in list(results):
                    results[key] = {"missing": True}
            frame = frame.f_back
        return Q
"""

def _grade(grader, tmp_path: Path, source: str, drill: str = "sdpa") -> dict:
    return grade_source(grader, tmp_path, drill, source, timeout=30.0)


def test_replacing_the_harness_export_does_not_hide_an_input_modified_in_place(warm_grader, tmp_path):
    verdict = _grade(warm_grader, tmp_path, MUTATION_HIDDEN_BY_EXPORT)
    assert verdict["status"] != "pass", verdict


def test_results_marked_missing_are_the_learners_failure_not_an_internal_error(warm_grader, tmp_path):
    """Today: "internal grader error", origin grader, with the worker's KeyError traceback."""
    verdict = _grade(warm_grader, tmp_path, RESULTS_MARKED_MISSING)
    assert verdict["status"] != "pass" and verdict["origin"] == "learner", verdict
    assert "Traceback" not in verdict.get("detail", ""), verdict["detail"]
