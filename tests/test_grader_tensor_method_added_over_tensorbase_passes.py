"""An sdpa file that divides its Q in place passes "inputs unchanged" by setting
`torch.Tensor.clone` to a function of its own, which hands back a copy of Q taken before the
division when asked to clone that Q's memory.

`tamper.snapshot` records what `torch.Tensor.__dict__` holds before the learner's code runs,
and `rebound` checks only those names. `clone` (like `cpu`, `resolve_conj`, `as_subclass`, all
of which `export` calls) is not in it: it is inherited from `torch._C.TensorBase`. A name the
learner adds to the class shadows the inherited method and is never looked at, so the harness's
`export` clones the divided Q through the learner's function, gets the untouched copy, and
`studyapp grade sdpa file.py` prints PASS, "inputs unchanged 29 cases". Patching
`torch.Tensor.detach`, which is in the class's own dict, is rejected
(tests/test_grader_input_changed_in_place_hidden_by_the_grading_export.py)."""

from __future__ import annotations

import pytest
from grader_helpers import grade_source

pytest.importorskip("torch")

MUTATION_HIDDEN_BY_AN_ADDED_CLONE = """
    import math, torch
    _clone = torch._C.TensorBase.clone
    _before = {}  # data_ptr of a Q divided in place -> a copy taken before the division
    def _lying_clone(self, *args, **kwargs):
        copy = _before.get(self.data_ptr())
        if copy is not None and copy.shape == self.shape:
            return _clone(copy, *args, **kwargs)
        return _clone(self, *args, **kwargs)
    torch.Tensor.clone = _lying_clone  # a new name in Tensor's own dict: clone was TensorBase's
    def scaled_dot_product_attention(Q, K, V, mask=None):
        _before[Q.data_ptr()] = _clone(Q)
        Q /= math.sqrt(Q.shape[-1])
        scores = Q @ K.transpose(-2, -1)
        if mask is not None:
            scores = scores.masked_fill(mask == 0, float("-inf"))
        return torch.nan_to_num(torch.softmax(scores, -1)) @ V
"""


def test_a_method_added_over_tensorbases_does_not_hide_an_input_modified_in_place(warm_grader, tmp_path):
    verdict = grade_source(warm_grader, tmp_path, "sdpa", MUTATION_HIDDEN_BY_AN_ADDED_CLONE, timeout=30.0)
    rows = [row for row in verdict["checks"] if row["name"] == "inputs unchanged"]
    assert verdict["status"] != "pass", (verdict["summary"], rows)
