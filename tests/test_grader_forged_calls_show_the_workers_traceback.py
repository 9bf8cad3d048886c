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
