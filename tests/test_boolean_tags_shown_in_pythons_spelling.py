"""A tag that YAML reads as a boolean reaches the user as Python's `True`/`False`.

README: "A value that is not text where text belongs ... is shown as YAML writes it, never as
Python's spelling of it." `tags: [gating, true, false]` (or `NO`, `yes`, `on`, which YAML 1.1
also reads as booleans) makes `stats` list the tags `True` and `False` under "Mastery by tag",
and `due --json` gives `"tags": [..., "True", "False"]`: `vault.model._as_str_list` turns each
item into text with `str()`, while the same note's `drills: [true]` is reported as `true`
(`as_text`). The user never wrote `True`.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from vault_fixtures import studyapp_process, write

NOTE = ("---\nreview_count: 0\nnext_review: 2026-01-01\ntags: [gating, true, false]\n"
        "---\n# When does a gate stay open?\n\nWhen its sigmoid saturates.\n")


def _studyapp(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    return studyapp_process(tmp_path, *args, now="2026-06-01T09:00")


def test_boolean_tags_are_shown_as_yaml_writes_them(tmp_path):
    write(tmp_path / "vault" / "gate.md", NOTE)
    listed = _studyapp(tmp_path, "due", "--json")
    assert listed.returncode == 0, listed.stderr
    (entry,) = [e for e in json.loads(listed.stdout) if e.get("path") == "gate.md"]
    assert entry["tags"] == ["gating", "true", "false"], entry["tags"]

    stats = _studyapp(tmp_path, "stats")
    assert stats.returncode == 0, stats.stderr
    section = stats.stdout.split("Mastery by tag:", 1)[1]
    tags = [line.split()[0] for line in section.splitlines() if line.strip()]
    assert "True" not in tags and "False" not in tags, f"Python's spelling shown:\n{section}"
    assert {"gating", "true", "false"} <= set(tags), section
