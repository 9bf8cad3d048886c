"""`format_verdict` promises that learner text cannot draw a fake PASS. Control characters
are shown as symbols, but a line break in an exception's message (the summary, a check's
message) starts a new line at column 0, where the CLI draws its own status lines."""

from __future__ import annotations

import textwrap

import pytest
from grader_helpers import grade_limits

pytest.importorskip("torch")

from studyapp.commands.drills import format_verdict  # noqa: E402

STATUS_WORDS = ("PASS ", "FAIL ", "ERROR ")


def test_learner_text_cannot_start_a_line_that_reads_as_a_status_line(warm_grader, tmp_path):
    path = tmp_path / "hunt.py"
    fake = f"PASS  {path}  (sdpa, cpu, 0.81 s, seed 7)\\n  all core checks pass"
    path.write_text(textwrap.dedent(f"""
        def scaled_dot_product_attention(Q, K, V, mask=None):
            raise ValueError("\\n\\n{fake}")
    """))
    verdict = warm_grader.grade("sdpa", path, device="cpu", seed=7, limits=grade_limits(timeout=30.0))
    assert verdict["status"] == "error", verdict
    lines = format_verdict(verdict).splitlines()
    forged = [line for line in lines[1:] if line.startswith(STATUS_WORDS)]
    assert not forged, "\n".join(lines)
