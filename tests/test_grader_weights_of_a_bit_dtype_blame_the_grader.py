"""An sdpa file that returns (output, weights) with the weights as a tensor of an 8-bit raw
dtype (`torch.bits8`, what `.view(torch.bits8)` of a uint8 tensor gives) makes the grader
blame itself: `studyapp grade sdpa file.py` prints "ERROR ... internal grader error" with the
worker's traceback, origin "grader".

The export sends the tensor back as it is (clone works for bits8) and the parent checks the
output, which is right, then compares the weights of the case's two calls
(`_check_determinism`: `same_values` -> `torch.equal`, "equal_cpu" not implemented for 'Bits8';
past that, `compare_values` casts them to float64: "copy_" not implemented): a
NotImplementedError from the judge, which the worker reports as its own bug. The weights'
dtype is never checked before they are used (the output's is). Wrong weights
are the learner's mistake: a "weights" failure (or a wrong-dtype one), origin "learner"."""

from __future__ import annotations

import pytest
from grader_helpers import grade_source

pytest.importorskip("torch")

WEIGHTS_AS_BITS8 = """
    import torch
    import torch.nn.functional as F

    def scaled_dot_product_attention(Q, K, V, mask=None):
        allowed = None if mask is None else mask.bool()
        out = F.scaled_dot_product_attention(Q, K, V, attn_mask=allowed)
        shape = (*torch.broadcast_shapes(Q.shape[:-2], K.shape[:-2]), Q.shape[-2], K.shape[-2])
        weights = torch.zeros(shape, dtype=torch.uint8, device=Q.device).view(torch.bits8)
        return out, weights
"""


def test_weights_of_a_raw_bit_dtype_are_the_learners_failure(warm_grader, tmp_path):
    verdict = grade_source(warm_grader, tmp_path, "sdpa", WEIGHTS_AS_BITS8, timeout=30.0)
    assert verdict["origin"] == "learner", (verdict["summary"], verdict["detail"][-300:])
    assert verdict["status"] == "fail", verdict["summary"]
