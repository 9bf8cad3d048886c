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


def device_of(data: Path) -> str:
    """The device id a data dir logs under."""
    return json.loads((data / "data-dir.json").read_text())["id"]


def own_log(vault: Path, data: Path) -> Path:
    """The data dir's own log file in the vault."""
    return vault / ".studyapp" / "log" / f"{device_of(data)}.jsonl"


def run(capsys, vault: Path, data: Path, *args: str, now: str) -> tuple[int, str, str]:
    """Run one command, whatever its outcome: (exit code, stdout, stderr)."""
    capsys.readouterr()
    code = main([*args, "--vault", str(vault), "--data-dir", str(data), "--now", now])
    out, err = capsys.readouterr()
    return code, out, err


def with_output_to_a_full_disk(vault: Path, data: Path, *args: str):
    """`studyapp ARGS` in a process whose standard output is /dev/full (the caller skips where
    there is none): its CompletedProcess, stderr as text."""
    import subprocess
    import sys

    root = Path(__file__).resolve().parent.parent
    env = dict(os.environ, PYTHONPATH=str(root), STUDYAPP_DATA_DIR=str(data))
    with open("/dev/full", "w") as full:
        return subprocess.run([sys.executable, "-m", "studyapp", *args, "--vault", str(vault),
                               "--data-dir", str(data), "--now", "2026-11-20T07:00"],
                              env=env, stdout=full, stderr=subprocess.PIPE, text=True, timeout=60)


def two_devices(tmp_path: Path) -> tuple[Path, Path, Path, Path]:
    """(vault A, data A, vault B, data B): one vault copied to a second machine, synced by
    copying files (`copy_logs`)."""
    vault_a = make_vault(tmp_path / "a" / "vault")
    settled(*vault_a.glob("*.md"))
    vault_b = tmp_path / "b" / "vault"
    shutil.copytree(vault_a, vault_b)
    return vault_a, tmp_path / "a" / "data", vault_b, tmp_path / "b" / "data"


def reviewed_on_both_offline(capsys, tmp_path: Path, note: str) -> tuple[Path, Path, Path, Path]:
    """`two_devices` where B reviews `note` at 09:00 and A at 10:00, each offline, then both
    logs are copied both ways and both devices sync (A's review now follows B's)."""
    vault_a, data_a, vault_b, data_b = two_devices(tmp_path)
    cli(capsys, vault_b, data_b, "rate", note, "--rating", "good", now="2026-11-20T09:00")
    cli(capsys, vault_a, data_a, "rate", note, "--rating", "good", now="2026-11-20T10:00")
    copy_logs(vault_b, vault_a)
    copy_logs(vault_a, vault_b)
    settled(*vault_a.glob("*.md"), *vault_b.glob("*.md"))
    cli(capsys, vault_a, data_a, "sync", now="2026-11-20T10:30")
    cli(capsys, vault_b, data_b, "sync", now="2026-11-20T10:30")
    return vault_a, data_a, vault_b, data_b


def own_log_put_back_older(capsys, vault: Path, data: Path) -> tuple[Path, bytes]:
    """Rate a.md (07:00), keep the own log's bytes, rate b.md (08:00), and put those older bytes
    back (a sync tool, a restore): (the own log, the newer bytes it held)."""
    cli(capsys, vault, data, "rate", "a.md", "--rating", "good", now="2026-11-20T07:00")
    own = own_log(vault, data)
    older = own.read_bytes()
    cli(capsys, vault, data, "rate", "b.md", "--rating", "good", now="2026-11-20T08:00")
    newer = own.read_bytes()
    own.write_bytes(older)
    return own, newer
