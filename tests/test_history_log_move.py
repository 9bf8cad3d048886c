"""`studyapp history-log` moves this device's log while other studyapp processes write: a review
waiting for the writer lock meanwhile lands in the log's new place, never in the old one, which
nothing reads any more (a rebuilt database lost it)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from vault_fixtures import USERS_NOTE, write

ROOT = Path(__file__).resolve().parents[1]
HOLD = """
import fcntl, sys, time
handle = open(sys.argv[1], "a")
fcntl.flock(handle, fcntl.LOCK_EX)
print("held", flush=True)
time.sleep(float(sys.argv[2]))
"""


def studyapp(common: list[str], *args: str) -> subprocess.Popen:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.Popen([sys.executable, "-m", "studyapp", *common, *args], env=env, cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def finish(process: subprocess.Popen) -> str:
    out, err = process.communicate(timeout=60)
    assert process.returncode == 0, err
    return out


def test_a_review_waiting_for_the_lock_follows_the_log_to_its_new_place(tmp_path):
    vault, data = tmp_path / "vault", tmp_path / "data"
    write(vault / "n.md", USERS_NOTE)
    common = ["--vault", str(vault), "--data-dir", str(data)]
    finish(studyapp(common, "rate", "n.md", "--rating", "good", "--now", "2026-01-01T10:00:00+00:00"))
    finish(studyapp(common, "rate", "n.md", "--rating", "good", "--now", "2026-01-02T10:00:00+00:00"))
    holder = subprocess.Popen([sys.executable, "-c", HOLD, str(data / "writer.lock"), "3"],
                              stdout=subprocess.PIPE, text=True)
    assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
    rate = studyapp(common, "rate", "n.md", "--rating", "good", "--now", "2026-01-10T10:00:00+00:00")
    time.sleep(1.0)  # the rate waits for the lock
    move = studyapp(common, "history-log", "data-dir")
    finish(rate)
    finish(move)
    holder.wait(timeout=30)

    def reviews(folder: Path) -> int:
        return sum(1 for log in folder.glob("*.jsonl") for line in log.read_text().splitlines()
                   if json.loads(line).get("kind") == "review")

    assert reviews(data / "log") == 3
    assert reviews(vault / ".studyapp" / "log") == 0
    for name in ("studyapp.sqlite3", "studyapp.sqlite3-wal", "studyapp.sqlite3-shm"):
        (data / name).unlink(missing_ok=True)  # "deleting the database is safe"
    stats = json.loads(finish(studyapp(common, "stats", "--json", "--now", "2026-01-10T12:00:00+00:00")))
    assert stats["total_reviews"] == 3
    assert "review_count: 3" in (vault / "n.md").read_text()
