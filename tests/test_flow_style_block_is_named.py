"""A metadata block written as one flow-style mapping (`{"next_review": "2026-01-01"}`) was
reported as "cannot locate the line of 'next_review' in the metadata block", which names no
fix; the README promises a note a review could not write back names what to change."""

from __future__ import annotations

from vault_fixtures import studyapp_process, write


def test_a_flow_style_block_is_reported_as_one(tmp_path):
    write(tmp_path / "vault" / "flow.md", '---\n{"next_review": "2026-01-01", "review_count": 2}\n---\n# F\n')

    due = studyapp_process(tmp_path, "due", now="2026-06-01T10:00:00")

    assert due.returncode == 0, due.stderr
    assert "flow.md: the metadata block is one flow-style {...} mapping" in due.stderr, due.stderr
