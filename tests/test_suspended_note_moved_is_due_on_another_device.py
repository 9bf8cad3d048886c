"""A note suspended on one device and then moved into a folder is due, as a new note, on every
other device (and on this one once its cache was rebuilt from the log).

Two data dirs share a vault (a laptop and a desktop). The laptop runs `studyapp suspend a.md`;
the desktop replays the log and leaves a.md out of `due`, as it should. The learner then files
the note away (`mv a.md archive/a.md`, the same bytes). On the desktop, `due` now lists
`archive/a.md` as new and `stats` counts 0 suspended: the card the replay made for a.md has no
title and no content hash (a suspension event carries neither, a review event carries the
title), so `identity.reconcile_identity` cannot match the moved file to it and marks it
deleted. If the desktop reviews the note now, the suspension is gone on every device. A
never-reviewed note moved on the laptop itself stays suspended; and the same loss happens on
one device whose database (a cache: "Deleting the database is safe") was rebuilt from the log.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from vault_fixtures import studyapp_process, write

NOTE = ("---\nreview_count: 0\nnext_review: 2026-01-01\nlast_reviewed: null\n---\n"
        "# Why does layer norm not depend on the batch?\n\nIt normalises each token's features.\n")
OTHER = "---\nreview_count: 0\nnext_review: 2026-01-01\nlast_reviewed: null\n---\n# Softmax\n\nExp, then sum.\n"


def _studyapp(tmp_path: Path, data: str, *args: str) -> subprocess.CompletedProcess:
    result = studyapp_process(tmp_path, *args, now="2026-06-01T19:00", data=data)
    assert result.returncode == 0, (args, result.stderr)
    return result


def _listed(tmp_path: Path, data: str) -> list[str]:
    return sorted(entry.get("path") for entry in json.loads(_studyapp(tmp_path, data, "due", "--json").stdout))


def _suspended(tmp_path: Path, data: str) -> int:
    return json.loads(_studyapp(tmp_path, data, "stats", "--json").stdout)["counts_by_state"]["suspended"]


@pytest.mark.parametrize("where", ["another device", "this device, cache rebuilt"])
def test_a_suspended_note_moved_into_a_folder_stays_suspended(tmp_path, where):
    vault = tmp_path / "vault"
    write(vault / "a.md", NOTE)
    write(vault / "b.md", OTHER)
    _studyapp(tmp_path, "laptop", "suspend", "a.md")
    if where == "another device":
        here = "desktop"
    else:
        here = "laptop"
        for old in (tmp_path / "laptop").glob("studyapp.sqlite3*"):
            old.unlink()
    assert _listed(tmp_path, here) == ["b.md"]  # the suspension, replayed from the log

    (vault / "archive").mkdir()
    os.rename(vault / "a.md", vault / "archive" / "a.md")  # filed away, same bytes

    listed, suspended = _listed(tmp_path, here), _suspended(tmp_path, here)
    assert (listed, suspended) == (["b.md"], 1), (
        f"on {where}, the suspended note moved to archive/a.md is due again: due lists {listed}, "
        f"stats counts {suspended} suspended")
