"""Helpers of the review-log tests: run the CLI in-process, read what a device shows."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
from pathlib import Path

from studyapp.cli import main

LEGACY = """---
review_count: 2
last_reviewed: 2026-11-01
next_review: 2026-11-10
difficulty: medium
mastery_level: 0.1
---
# Why scale by sqrt(d_k)

Dot products grow with the dimension.
"""

NEW = """---
review_count: 0
last_reviewed: null
next_review: 2026-11-01
---
# Causal mask

Upper triangle set to -inf.
"""

OTHER = """---
review_count: 0
last_reviewed: null
next_review: 2026-11-01
mastery_level: 0.0
---
# KV cache

Keys and values of past tokens are kept.
"""


def make_vault(root: Path) -> Path:
    root.mkdir(parents=True)
    (root / "a.md").write_text(LEGACY)
    (root / "b.md").write_text(NEW)
    (root / "c.md").write_text(OTHER)
    return root


def cli(capsys, vault: Path, data: Path, *args: str, now: str) -> str:
    """Run one command; it must succeed. Returns its stdout."""
    capsys.readouterr()
    code = main([*args, "--vault", str(vault), "--data-dir", str(data), "--now", now])
    out, err = capsys.readouterr()
    assert code == 0, err
    return out


def card_states(data: Path) -> dict[str, tuple]:
    """Every card as the device's database holds it, by note path."""
    with sqlite3.connect(data / "studyapp.sqlite3") as conn:
        rows = conn.execute(
            "SELECT n.path, c.state, c.step, round(c.stability, 9), round(c.difficulty, 9),"
            " c.due, c.last_review, c.suspended, c.reps, c.lapses, c.legacy"
            " FROM cards c JOIN notes n ON n.key = c.note_key WHERE n.deleted = 0").fetchall()
    return {row[0]: tuple(row[1:]) for row in rows}


def review_log(data: Path) -> list[tuple]:
    """The reviews the database holds, in time order (what statistics count)."""
    with sqlite3.connect(data / "studyapp.sqlite3") as conn:
        return conn.execute(
            "SELECT n.path, r.rating, r.reviewed_at, r.state_before, r.state_after,"
            " round(r.stability_after, 9), r.due_after FROM reviews r"
            " JOIN notes n ON n.key = r.note_key ORDER BY r.reviewed_at, r.id").fetchall()


def owned_keys(vault: Path) -> dict[str, list[str]]:
    keys = ("last_reviewed", "next_review", "review_count", "mastery_level")
    return {path.name: [line for line in path.read_text().splitlines() if line.startswith(keys)]
            for path in sorted(vault.glob("*.md"))}


def stats(capsys, vault: Path, data: Path, now: str) -> dict:
    return json.loads(cli(capsys, vault, data, "stats", "--json", now=now))


def remove_database(data: Path) -> None:
    for name in ("studyapp.sqlite3", "studyapp.sqlite3-wal", "studyapp.sqlite3-shm"):
        (data / name).unlink(missing_ok=True)


def settled(*paths: Path) -> None:
    """Each file's mtime a minute back: past the replay's settle window (`sync.SETTLE_SECONDS`),
    as a note synced in a while ago is."""
    for path in paths:
        st = os.stat(path)
        os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns - 60 * 10**9))


def copy_logs(source: Path, target: Path) -> None:
    """A sync tool bringing one vault's review log files to another (not the notes)."""
    folder = target / ".studyapp" / "log"
    folder.mkdir(parents=True, exist_ok=True)
    for f in (source / ".studyapp" / "log").glob("*.jsonl"):
        shutil.copy2(f, folder / f.name)
