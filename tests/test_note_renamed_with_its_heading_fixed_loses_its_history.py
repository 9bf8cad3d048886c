"""A reviewed note whose heading is corrected and whose file is renamed to match loses its
review history: it comes back as a card made up from its review keys, and `undo` says the note
is gone.

The learner reviews `b.md` ("# Layer normalisation statistics"), then fixes the spelling of
the heading ("normalization") and renames the file to match (`mv b.md
layer-normalization.md`), both before the next studyapp command. README: a note's history
follows it across renames. Here `identity.reconcile_identity` matches a vanished note only by
its exact bytes or its exact title, and both changed, so the row is marked deleted and
`layer-normalization.md` is taken for a note reviewed by another tool: `due` shows it in the
review queue due at midnight, not in its learning step due at 20:10; its FSRS stability and
difficulty are gone; `undo` answers "cannot undo: the reviewed note b.md is no longer in the
vault" although its file is right there. A heading edit alone, or a rename alone, keeps it.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from vault_fixtures import studyapp_process, write

NOTE = ("---\nreview_count: 0\nnext_review: 2026-01-01\nlast_reviewed: null\n---\n"
        "# Layer normalisation statistics\n\nMean and variance over the features of one token.\n")


def _studyapp(tmp_path: Path, now: str, *args: str) -> subprocess.CompletedProcess:
    return studyapp_process(tmp_path, *args, now=now)


def _entry(tmp_path: Path, path: str) -> dict:
    listed = _studyapp(tmp_path, "2026-06-01T20:30", "due", "--json")
    assert listed.returncode == 0, listed.stderr
    (entry,) = [e for e in json.loads(listed.stdout) if e.get("path") == path]
    return entry


def test_fixing_the_heading_and_renaming_the_file_keeps_the_history(tmp_path):
    vault = tmp_path / "vault"
    old = write(vault / "b.md", NOTE)
    rated = _studyapp(tmp_path, "2026-06-01T20:00", "rate", "b.md", "--rating", "good")
    assert rated.returncode == 0, rated.stderr
    before = _entry(tmp_path, "b.md")
    assert (before["queue"], before["due_at"]) == ("learning", "2026-06-01T20:10:00+00:00")

    old.write_text(old.read_text(encoding="utf-8").replace("normalisation", "normalization"), encoding="utf-8")
    os.rename(old, vault / "layer-normalization.md")

    after = _entry(tmp_path, "layer-normalization.md")
    assert (after["queue"], after["due_at"]) == (before["queue"], before["due_at"]), (
        f"the renamed note lost its card: {after['queue']} due {after['due_at']}, "
        f"was {before['queue']} due {before['due_at']}")
    undone = _studyapp(tmp_path, "2026-06-01T20:40", "undo")
    assert undone.returncode == 0, f"undo of the note's review failed: {undone.stderr.strip()}"
    assert "review_count: 0\n" in (vault / "layer-normalization.md").read_text(encoding="utf-8")
