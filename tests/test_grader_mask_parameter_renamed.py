"""An sdpa whose mask parameter is named `attn_mask` (after F.scaled_dot_product_attention)
passed: the grader handed the mask by position only. The statement's signature is
`scaled_dot_product_attention(Q, K, V, mask=None)`, and a caller that names it (`mask=...`)
gets a TypeError. A case's second call names the mask."""

from __future__ import annotations

from pathlib import Path

import pytest
from grader_helpers import grade_source

pytest.importorskip("torch")

SOURCE = """
    import math, torch
    def scaled_dot_product_attention(Q, K, V, {name}=None):
        scores = Q @ K.transpose(-2, -1) / math.sqrt(Q.shape[-1])
        if {name} is not None:
            scores = scores.masked_fill({name} == 0, float("-inf"))
        return torch.nan_to_num(torch.softmax(scores, -1)) @ V
"""


def test_a_renamed_mask_parameter_fails_on_the_signature(warm_grader, tmp_path: Path):
    verdict = grade_source(warm_grader, tmp_path, "sdpa", SOURCE.replace("{name}", "attn_mask"), timeout=30.0)
    assert verdict["status"] != "pass", verdict["summary"]
    assert "signature" in verdict["summary"] and "mask" in verdict["summary"], verdict["summary"]


def test_the_statements_name_passes(warm_grader, tmp_path: Path):
    verdict = grade_source(warm_grader, tmp_path, "sdpa", SOURCE.replace("{name}", "mask"), timeout=30.0)
    assert verdict["status"] == "pass", verdict["summary"]
