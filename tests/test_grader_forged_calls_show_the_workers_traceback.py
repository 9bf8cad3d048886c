"""Wrong code that replaces the results collected so far with ones whose calls are not
exported values (plain ints) gets "internal grader error", origin grader, with the worker's
traceback (`AttributeError: 'int' object has no attribute 'get'` in `unpack_output`) printed by
`studyapp grade`.

`tests/test_grader_results_forged_in_the_child.py` closed this for results marked "missing"
only: `harness_altered` counts a case's calls but never looks at what each call holds, and the
judge reads each as an exported dict. The parent must refuse such results as the learner's
failure, as it refuses a result that is not a dict or holds a Tensor subclass."""

from __future__ import annotations

from pathlib import Path

import pytest
from grader_helpers import grade_source

pytest.importorskip("torch")

# wrong code (returns Q) that, from inside its call, swaps every result already collected for
# one with the right number of calls, each a plain int instead of an exported value
CALLS_FORGED_AS_INTS = """
    import sys
    def scaled_dot_product_attention(Q, K, V, mask=None):
        frame = sys._getframe()
        while frame is not None:
            results = frame.f_locals.get("results")
            if isinstance(results, dict):
                for key in list(results):
                    results[key] = {"calls": [0, 0, 0], "inputs": []}
            frame = frame.f_back
        return Q
"""


def test_calls_forged_as_ints_are_the_learners_failure_not_an_internal_error(warm_grader, tmp_path: Path):
    verdict = grade_source(warm_grader, tmp_path, "sdpa", CALLS_FORGED_AS_INTS, timeout=30.0)
    assert verdict["status"] != "pass", verdict
    assert verdict["origin"] == "learner", (verdict["summary"], verdict["origin"])
    assert "Traceback" not in verdict.get("detail", ""), verdict["detail"][-600:]


# the calls as they were, each given attention weights in export's own form but of a dtype no
# judge compares (`torch.bits8`, which `export` never sends): torch.equal raised on them in the
# judge's determinism check, and the grader blamed itself
CALLS_FORGED_AS_BITS = """
    import sys, torch
    def bits_like(call):
        bits = torch.zeros(call["tensor"].shape, dtype=torch.uint8).view(torch.bits8)
        return {**call, "tensor": bits, "dtype": "torch.bits8"}
    def scaled_dot_product_attention(Q, K, V, mask=None):
        frame = sys._getframe()
        while frame is not None:
            results = frame.f_locals.get("results")
            if isinstance(results, dict):
                for key, result in list(results.items()):
                    calls = result.get("calls") if isinstance(result, dict) else None
                    if isinstance(calls, list) and all(c.get("type") == "Tensor" for c in calls):
                        results[key] = {**result, "calls": [{"type": "tuple", "items": [c, bits_like(c)],
                                                             "length": 2} for c in calls]}
            frame = frame.f_back
        return Q
"""


def test_calls_forged_with_a_dtype_no_judge_compares_are_the_learners_failure(warm_grader, tmp_path: Path):
    verdict = grade_source(warm_grader, tmp_path, "sdpa", CALLS_FORGED_AS_BITS, timeout=30.0)
    assert verdict["status"] != "pass", verdict
    assert verdict["origin"] == "learner", (verdict["summary"], verdict["origin"])
    assert "internal grader error" not in verdict["summary"], verdict["summary"]
