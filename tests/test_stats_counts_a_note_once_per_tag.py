"""`stats` "Mastery by tag" counts a note twice when its `tags:` list names a tag twice.

A note whose tags read `[attention, transformer, attention]` (a merge, or a tag typed in two
places) is one note about attention; `stats` says "attention ... (2 notes)" in a vault holding
one note, `stats --json` gives `"notes": 2`, and the tag's mean mastery weighs that note twice
against the other notes of the tag (`stats.mastery_by_tag` appends the note's mastery once per
item of `note.tags`, repeats included). Obsidian shows the tag once.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from vault_fixtures import studyapp_process, write

NOTE = ("---\nreview_count: 0\nnext_review: 2026-01-01\ntags: [attention, transformer, attention]\n"
        "---\n# What does attention compute?\n\nA weighted sum of values.\n")
OTHER = ("---\nreview_count: 0\nnext_review: 2026-01-01\ntags: [attention]\n"
         "---\n# Why scale by sqrt(d)?\n\nTo keep the logits' variance near one.\n")


def _studyapp(tmp_path: Path, now: str, *args: str) -> subprocess.CompletedProcess:
    return studyapp_process(tmp_path, *args, now=now)


def test_a_note_naming_a_tag_twice_is_one_note_of_that_tag(tmp_path):
    write(tmp_path / "vault" / "attention.md", NOTE)
    write(tmp_path / "vault" / "scale.md", OTHER)
    rated = _studyapp(tmp_path, "2026-06-01T09:00", "rate", "attention.md", "--rating", "easy")
    assert rated.returncode == 0, rated.stderr

    shown = _studyapp(tmp_path, "2026-06-01T10:00", "stats", "--json")
    assert shown.returncode == 0, shown.stderr
    by_tag = json.loads(shown.stdout)["mastery_by_tag"]
    assert by_tag["transformer"]["notes"] == 1, by_tag
    assert by_tag["attention"]["notes"] == 2, (
        f"two notes carry the tag attention, stats counts {by_tag['attention']['notes']}: {by_tag}")
    # the tag's mastery is the mean over its two notes, each counted once
    reviewed = by_tag["transformer"]["mastery"]
    assert abs(by_tag["attention"]["mastery"] - reviewed / 2) < 0.002, by_tag

    text = _studyapp(tmp_path, "2026-06-01T10:00", "stats")
    assert text.returncode == 0, text.stderr
    line = next(line for line in text.stdout.splitlines() if line.strip().startswith("attention"))
    assert line.rstrip().endswith("(2 notes)"), line
