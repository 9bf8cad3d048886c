"""The "inputs unchanged" check on big cases too: it was made on the small cases only (a big
case, past 64, `ONE_CALL`, sent back no inputs). Code that scales Q in place only for long inputs (a memory saving for long
sequences, "no extra copy of Q") changes the caller's Q there and passes: the statement's
"Don't modify the inputs" holds at every size, and the mistake (`mutates_inputs`) is one the
drill names."""

from __future__ import annotations

import pytest
from grader_helpers import grade_source

pytest.importorskip("torch")

IN_PLACE_WHEN_LONG = """
    import math, torch
    def scaled_dot_product_attention(Q, K, V, mask=None):
        if Q.shape[-2] * K.shape[-2] > 64 * 64 and Q.is_contiguous():
            Q = Q.mul_(1 / math.sqrt(Q.shape[-1]))  # long inputs: scale in place, no extra copy of Q
        else:
            Q = Q / math.sqrt(Q.shape[-1])
        scores = Q @ K.transpose(-2, -1)
        if mask is not None:
            scores = scores.masked_fill(mask == 0, float("-inf"))
        return torch.nan_to_num(torch.softmax(scores, dim=-1)) @ V
"""


def test_an_input_modified_in_place_only_on_long_inputs_fails(warm_grader, tmp_path):
    verdict = grade_source(warm_grader, tmp_path, "sdpa", IN_PLACE_WHEN_LONG)
    assert verdict["status"] == "fail", verdict
    assert verdict["summary"].startswith("failed: inputs unchanged (looks like: an argument is modified in place"), verdict
