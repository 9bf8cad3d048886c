"""A file that changes torch's process-wide settings while it is graded: importing it turned TF32
on for every float32 matmul (`torch.set_float32_matmul_precision("high")`), or made float64 the
default dtype. Right on the CPU, where the grader runs, so it passed; in the learner's model on a
GPU every matmul after it loses precision, and every tensor made after it changes dtype. The
child notes these settings before the file loads and rejects one that changed them."""

from __future__ import annotations

from pathlib import Path

import pytest
from grader_helpers import grade_source

pytest.importorskip("torch")

RIGHT = """
    import math, torch
    {setting}
    def scaled_dot_product_attention(Q, K, V, mask=None):
        scores = Q @ K.transpose(-2, -1) / math.sqrt(Q.shape[-1])
        if mask is not None:
            scores = scores.masked_fill(mask == 0, float("-inf"))
        return torch.nan_to_num(torch.softmax(scores, -1)) @ V
"""
SETTINGS = {
    "tf32 matmuls": 'torch.set_float32_matmul_precision("high")',
    "default dtype": "torch.set_default_dtype(torch.float64)",
}


@pytest.mark.parametrize("what", list(SETTINGS))
def test_a_file_that_changes_torchs_settings_is_rejected(warm_grader, tmp_path: Path, what: str):
    verdict = grade_source(warm_grader, tmp_path, "sdpa", RIGHT.replace("{setting}", SETTINGS[what]), timeout=30.0)
    assert verdict["status"] != "pass", (what, verdict["summary"])
    assert verdict["origin"] == "learner", verdict
    assert "torch's settings" in verdict["summary"], verdict["summary"]


def test_the_same_file_without_the_setting_passes(warm_grader, tmp_path: Path):
    verdict = grade_source(warm_grader, tmp_path, "sdpa", RIGHT.replace("{setting}", ""), timeout=30.0)
    assert verdict["status"] == "pass", verdict["summary"]
