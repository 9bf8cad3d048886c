"""A note whose body opens with a horizontal rule (`---`, `***` or `___` under its metadata
block, then `# Real Title`) is listed by `studyapp due` with the title `---` (or `***`,
`___`): the rule line is short and not a heading, so `parse.title_from_first_line` takes it as
a plain title line. A rule is a line across the page in every markdown viewer, never text, and
the note's real `# ` heading is right below it; the review screen, `due` and the review log
all name the note by that rule.
"""

from __future__ import annotations

import json

import pytest
from vault_fixtures import studyapp_process, write

BLOCK = "---\nnext_review: 2026-01-01\nreview_count: 2\n---\n"


@pytest.mark.parametrize("rule", ["---", "***", "___", "- - -"])
def test_a_rule_above_the_heading_is_not_the_title(tmp_path, rule):
    write(tmp_path / "vault" / "n.md", f"{BLOCK}{rule}\n\n# Real Title\n\nbody\n")

    due = studyapp_process(tmp_path, "due", "--json", now="2026-06-01T10:00:00")

    assert due.returncode == 0, due.stderr
    [note] = json.loads(due.stdout)
    assert note["title"] == "Real Title"
