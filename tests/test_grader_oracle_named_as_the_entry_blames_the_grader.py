"""A file whose entry *is* the grader's reference (`scaled_dot_product_attention =
sys.modules["studyapp_kernels.attention"].sdpa_oracle`) gets "internal grader error: the drill's
harness needs code the child withholds", origin grader, instead of "rejected: your code called
the grader's reference".

The child tells a withheld function's caller apart by the calling frame's code
(`Withholding._refuse`): the harness's `run_case` calls the entry, and when the entry is the
stub itself, the harness's frame is the caller, so the learner's use of the oracle is booked as
the grader's bug (and a grade the grader could not run is not counted as a run)."""

from __future__ import annotations

from pathlib import Path

import pytest
from grader_helpers import grade_source

pytest.importorskip("torch")

NAMED = "rejected: your code called the grader's reference"

ORACLE_AS_THE_ENTRY = """
    import sys
    scaled_dot_product_attention = sys.modules["studyapp_kernels.attention"].sdpa_oracle
"""


ORACLE_IN_A_PARTIAL = """
    import functools, sys
    scaled_dot_product_attention = functools.partial(sys.modules["studyapp_kernels.attention"].sdpa_oracle)
"""


@pytest.mark.parametrize("source", [ORACLE_AS_THE_ENTRY, ORACLE_IN_A_PARTIAL], ids=["bare", "partial"])
def test_the_oracle_named_as_the_entry_is_the_learners_failure(warm_grader, tmp_path: Path, source: str):
    verdict = grade_source(warm_grader, tmp_path, "sdpa", source, timeout=30.0)
    assert verdict["status"] != "pass", verdict
    assert verdict["origin"] == "learner", (verdict["summary"], verdict["origin"])
    assert NAMED in verdict["summary"], verdict["summary"]
