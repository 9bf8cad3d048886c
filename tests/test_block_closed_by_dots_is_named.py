"""A metadata block closed by YAML's document end `...` instead of `---` was reported as "opened
with '---' but never closed": the user sees a closing line and the message says there is none.
Obsidian reads only `---` as the close, so the note is still refused, with the line named."""

from __future__ import annotations

from vault_fixtures import studyapp_process, write


def test_a_block_closed_by_dots_says_so(tmp_path):
    note = "---\nnext_review: 2026-01-01\nreview_count: 2\n...\n# Title\n\nbody\n"
    write(tmp_path / "vault" / "dots.md", note)

    due = studyapp_process(tmp_path, "due", now="2026-06-01T10:00:00")

    assert due.returncode == 0, due.stderr
    line = next(line for line in due.stderr.splitlines() if "dots.md" in line)
    assert "'...'" in line and "'---'" in line and "never closed" not in line, line
    assert (tmp_path / "vault" / "dots.md").read_text() == note
