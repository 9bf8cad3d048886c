"""An edit that keeps a note's size and puts its mtime back (`touch -r`, `rsync -t`, a script
restoring times) still changes its ctime, which no program can set: the metadata cache keys on
it too, as git's index does, so a warm load never serves the note as it was."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from vault_fixtures import USERS_NOTE, write

from studyapp.vault import Vault

OLD_NS = 1_700_000_000_000_000_000
REPO = Path(__file__).resolve().parents[1]


def _rewrite_keeping_size_and_mtime(path: Path, old: str, new: str) -> None:
    """Replace `old` by `new` (same length) in place, then restore size and mtime exactly;
    waits until the ctime moved (its clock may tick coarsely)."""
    assert len(old.encode()) == len(new.encode())
    before = path.stat()
    while True:
        time.sleep(0.01)
        path.write_bytes(path.read_bytes().replace(old.encode(), new.encode()))
        os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
        after = path.stat()
        if after.st_ctime_ns != before.st_ctime_ns:
            break
    assert (after.st_size, after.st_mtime_ns) == (before.st_size, before.st_mtime_ns)


def test_a_warm_load_reads_a_note_edited_with_its_size_and_mtime_kept(tmp_path):
    vault_dir, cache = tmp_path / "vault", tmp_path / "data" / "cache.sqlite3"
    note = write(vault_dir / "主题" / "n.md", USERS_NOTE)
    os.utime(note, ns=(OLD_NS, OLD_NS))
    assert Vault(vault_dir, cache).load().by_path()["主题/n.md"].next_review.isoformat() == "2026-03-02"
    warm = Vault(vault_dir, cache).load()
    assert (warm.parsed, warm.reused) == (0, 1)  # cached: the edit below is what it must see

    _rewrite_keeping_size_and_mtime(note, "next_review: '2026-03-02'", "next_review: '2026-04-09'")
    again = Vault(vault_dir, cache).load()
    assert again.by_path()["主题/n.md"].next_review.isoformat() == "2026-04-09"
    assert again.parsed == 1
    assert Vault(vault_dir, cache).load().reused == 1  # and cached again, as it is now


def test_due_as_a_command_sees_the_edit_too(tmp_path):
    vault_dir, data = tmp_path / "vault", tmp_path / "data"
    note = write(vault_dir / "n.md", USERS_NOTE.replace("next_review: '2026-03-02'",
                                                        "next_review: '2026-12-30'"))
    os.utime(note, ns=(OLD_NS, OLD_NS))

    def due() -> list[str]:
        out = subprocess.run(
            [sys.executable, "-m", "studyapp", "due", "--json", "--vault", str(vault_dir),
             "--data-dir", str(data), "--now", "2026-06-15T12:00"],
            capture_output=True, text=True, cwd=REPO, env={**os.environ, "PYTHONPATH": str(REPO)})
        assert out.returncode == 0, out.stderr
        return [row["path"] for row in json.loads(out.stdout)]

    assert due() == [] and due() == []  # not due until December; the second run is warm
    _rewrite_keeping_size_and_mtime(note, "next_review: '2026-12-30'", "next_review: '2026-06-01'")
    assert due() == ["n.md"]


def test_the_app_rereads_a_shown_note_edited_with_its_size_and_mtime_kept(tmp_path):
    """The TUI re-reads a shown note only when it changed on disk (`reread_if_changed`)."""
    from studyapp.context import build_context
    from studyapp.live_vault import LiveVault
    from studyapp.reviews import ReviewService

    vault_dir = tmp_path / "vault"
    path = write(vault_dir / "n.md", USERS_NOTE)
    os.utime(path, ns=(OLD_NS, OLD_NS))
    ctx = build_context(vault=str(vault_dir), data_dir=str(tmp_path / "data"), now="2026-06-15T12:00")
    with ReviewService(ctx) as service:
        vault = LiveVault(service)
        vault.load()
        assert vault.notes["n.md"].difficulty == "medium"
        _rewrite_keeping_size_and_mtime(path, "difficulty: medium", "difficulty: hard!!")
        assert vault.reread_if_changed("n.md")
        assert vault.notes["n.md"].difficulty == "hard!!"
