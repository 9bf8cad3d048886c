"""`undo` of a note's review silently takes back the suspension made after it, and the review
log, replayed, says the note is still suspended.

A learner rates a note, then suspends it (`studyapp suspend a.md`: never due), then runs
`studyapp undo` to take back the rating. The undo says "undid the easy review of a.md: restored
exactly" and nothing about the suspension, yet the note is due again (`due` lists it as new,
`stats` counts 0 suspended): the card is put back as it was before the review, suspension flag
included. The log still holds the suspension (review, suspend, undo), so `sync --full`, a
deleted cache rebuilt, or any other device replaying the log finds the note suspended: the
same history gives two answers, depending on whether the cache was rebuilt.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from vault_fixtures import studyapp_process, write

NOTE = "---\nreview_count: 0\nnext_review: 2026-01-01\nlast_reviewed: null\n---\n# Gates\n\nSigmoids.\n"


def _studyapp(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    result = studyapp_process(tmp_path, *args, now="2026-06-01T09:00")
    assert result.returncode == 0, (args, result.stderr)
    return result


def _suspended(tmp_path: Path) -> int:
    return json.loads(_studyapp(tmp_path, "stats", "--json").stdout)["counts_by_state"]["suspended"]


def _listed(tmp_path: Path) -> list[str]:
    return [entry.get("path") for entry in json.loads(_studyapp(tmp_path, "due", "--json").stdout)]


def test_undoing_a_review_keeps_the_suspension_made_after_it(tmp_path):
    note = write(tmp_path / "vault" / "a.md", NOTE)
    _studyapp(tmp_path, "rate", "a.md", "--rating", "easy")
    _studyapp(tmp_path, "suspend", "a.md")
    _studyapp(tmp_path, "undo")
    assert note.read_text(encoding="utf-8") == NOTE  # the review is taken back in the note

    after_undo = (_suspended(tmp_path), _listed(tmp_path))
    _studyapp(tmp_path, "sync", "--full")  # the same history, replayed from the log
    after_replay = (_suspended(tmp_path), _listed(tmp_path))
    assert after_undo == after_replay, (
        f"right after undo: {after_undo[0]} suspended, due lists {after_undo[1]}; after replaying "
        f"the same log: {after_replay[0]} suspended, due lists {after_replay[1]}")
    assert after_undo == (1, []), f"the suspension made after the review was dropped: {after_undo}"
