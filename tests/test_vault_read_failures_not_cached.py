"""A read that failed for a moment (the note renamed away and back by a sync tool between the
scan and the read) was stored in the metadata cache as the note's problem: "cannot read: No
such file or directory" was then reported, and the note skipped, on every later run, though it
reads fine. Such problems are no longer kept: the next load reads the file again."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest
from vault_fixtures import USERS_NOTE, write

from studyapp.vault import Vault

NOW = "2026-06-15T09:00"
NOTE = "note.md"


def _old_vault(tmp_path: Path, count: int = 3) -> Path:
    vault = tmp_path / "vault"
    for i in range(count):
        write(vault / f"other{i}.md", USERS_NOTE)
    write(vault / NOTE, USERS_NOTE.replace("review_count: 0", "review_count: 3")
          .replace("last_reviewed: null", "last_reviewed: '2026-06-01'"))
    old = time.time() - 3600  # outside the cache's racy window
    for entry in vault.iterdir():
        os.utime(entry, (old, old))
    return vault








@pytest.mark.parametrize("workers", [False, True], ids=["in-process", "worker-pool"])
def test_a_note_that_vanished_for_a_moment_during_a_load_is_read_again(tmp_path, monkeypatch, workers):
    vault = _old_vault(tmp_path, count=5)
    cache = tmp_path / "cache.sqlite3"
    if workers:  # the big cold load's pool of forked workers, on a few files
        monkeypatch.setattr("studyapp.vault.parallel.MIN_FILES", 1)
        monkeypatch.setattr("studyapp.vault.parallel.BATCH", 2)
        monkeypatch.setattr("studyapp.vault.parallel.free_cores", lambda: 2)
    import studyapp.vault.vault as vault_module

    real = vault_module._note_from_file
    away = tmp_path / "away.md"

    def moved_away_while_read(path, abs_path, *stat):
        if path != NOTE:
            return real(path, abs_path, *stat)
        os.rename(abs_path, away)  # a sync tool moving the note out and back (rename keeps the mtime)
        try:
            return real(path, abs_path, *stat)
        finally:
            os.rename(away, abs_path)

    monkeypatch.setattr(vault_module, "_note_from_file", moved_away_while_read)
    first = Vault(vault, cache_file=cache).load()
    assert [p.path for p in first.problems] == [NOTE]  # fair: it was gone at that moment
    monkeypatch.setattr(vault_module, "_note_from_file", real)
    assert (vault / NOTE).is_file()
    later = Vault(vault, cache_file=cache).load()
    assert later.problems == [], f"a passing read error was cached as the note's problem: {later.problems}"
    assert NOTE in {n.path for n in later.notes}
