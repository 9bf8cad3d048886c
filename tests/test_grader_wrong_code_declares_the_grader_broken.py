"""Wrong code (returns Q) that adds a name to the child's record of the harness's calls to
withheld code gets "internal grader error: the drill's harness needs code the child withholds",
origin grader, and is not counted as a run: after it `studyapp drills` still shows sdpa "not
started 0/0", where the same wrong code without the line shows "failing 0/1".

The record (`Withholding.harness_calls`) is reached without walking a frame: every kernels
module holds the bound method `__studyapp_oracle_withheld__`, whose `__self__` is the
Withholding. `child._withheld_calls` trusts whatever that list holds, and the worker reports a
harness call as the grader's bug."""

from __future__ import annotations

from pathlib import Path

import pytest
from grader_helpers import grade_source

pytest.importorskip("torch")

HARNESS_CALL_FORGED = """
    import sys
    _withholding = sys.modules["studyapp_kernels.attention"].__studyapp_oracle_withheld__.__self__
    _withholding.harness_calls.append("sdpa_oracle")
    def scaled_dot_product_attention(Q, K, V, mask=None):
        return Q
"""


def test_a_forged_harness_call_is_the_learners_failure(warm_grader, tmp_path: Path):
    verdict = grade_source(warm_grader, tmp_path, "sdpa", HARNESS_CALL_FORGED, timeout=30.0)
    assert verdict["status"] == "fail", (verdict["status"], verdict["summary"])
    assert verdict["origin"] == "learner", (verdict["summary"], verdict["origin"])
