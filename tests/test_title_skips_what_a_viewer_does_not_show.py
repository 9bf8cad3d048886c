"""A note's title is the first line a markdown viewer shows as text. A first line that is a whole
HTML comment (`<!-- generated -->`, which templates and exporters put on top) was taken as the
title, and a heading closed by hashes (`# Real Title #`, CommonMark's closed ATX heading) kept
its closing `#`."""

from __future__ import annotations

import json

import pytest
from vault_fixtures import studyapp_process, write

BLOCK = "---\nnext_review: 2026-01-01\nreview_count: 2\n---\n"


@pytest.mark.parametrize("head", ["<!-- generated -->\n# Real Title", "# Real Title #", "# Real Title ###",
                                  "<!-- a comment -->\n\n---\n\n# Real Title ##"])
def test_the_title_is_what_a_viewer_shows(tmp_path, head):
    write(tmp_path / "vault" / "n.md", f"{BLOCK}{head}\n\nbody\n")

    due = studyapp_process(tmp_path, "due", "--json", now="2026-06-01T10:00:00")

    assert due.returncode == 0, due.stderr
    [note] = json.loads(due.stdout)
    assert note["title"] == "Real Title"


def test_a_hash_that_belongs_to_the_title_stays(tmp_path):
    write(tmp_path / "vault" / "n.md", f"{BLOCK}# C# basics\n\nbody\n")

    due = studyapp_process(tmp_path, "due", "--json", now="2026-06-01T10:00:00")

    [note] = json.loads(due.stdout)
    assert note["title"] == "C# basics"
