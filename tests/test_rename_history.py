"""A renamed note keeps its history on every replay of the log.

A note's path is its identity in the log, so whichever command notices a rename (`due`, the
app's load, `rate`, `stats`, `undo`) must log it as a MOVE event: otherwise `sync --full`, a
second device or a rebuilt database takes the renamed note for a new card and rewrites it.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import threading
import time
import uuid
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from history_helpers import card_states, cli, remove_database, review_log

from studyapp.config import Settings
from studyapp.context import build_context
from studyapp.history.events import Event, EventKind
from studyapp.history.replay import replay
from studyapp.reviews import ReviewService

ROOT = Path(__file__).resolve().parent.parent

NOTE = """---
created: '2025-10-19'
last_reviewed: null
next_review: '2025-10-19'
review_count: 0
difficulty: medium
mastery_level: 0.0
tags:
- T
---
# Note A

## 面试标准答案

answer text

## 详细技术解析

details
"""


def owned(path: Path) -> list[str]:
    keys = ("last_reviewed", "next_review", "review_count", "mastery_level")
    return [line for line in path.read_text().splitlines() if line.startswith(keys)]


def moves_logged(vault: Path) -> list[dict]:
    found = []
    for log in (vault / ".studyapp" / "log").glob("*.jsonl"):
        found += [e for e in map(json.loads, log.read_text().splitlines()) if e["kind"] == "move"]
    return found


def live_paths(data: Path) -> list[str]:
    with sqlite3.connect(data / "studyapp.sqlite3") as conn:
        return sorted(p for (p,) in conn.execute("SELECT path FROM notes WHERE deleted = 0"))


def reviewed_then_renamed(capsys, tmp_path) -> tuple[Path, Path]:
    vault, data = tmp_path / "vault", tmp_path / "data"
    vault.mkdir()
    (vault / "a.md").write_text(NOTE)
    for day in ("2026-01-01T10:00", "2026-01-02T10:00", "2026-01-05T10:00"):
        cli(capsys, vault, data, "rate", "a.md", "--rating", "good", now=day)
    os.rename(vault / "a.md", vault / "b.md")
    return vault, data


@pytest.mark.parametrize("noticed_by", ["due", "stats", "rate"])
def test_a_renamed_and_reviewed_note_keeps_its_schedule_on_every_replay(capsys, tmp_path, noticed_by):
    vault, data = reviewed_then_renamed(capsys, tmp_path)
    if noticed_by != "rate":  # else the rating below notices it, at the very instant it rates
        cli(capsys, vault, data, noticed_by, now="2026-01-06T10:00")
    cli(capsys, vault, data, "rate", "b.md", "--rating", "good", now="2026-01-25T10:00")
    assert [(m["note"], m["to"]) for m in moves_logged(vault)] == [("a.md", "b.md")]
    keys, cards, reviews = owned(vault / "b.md"), card_states(data), review_log(data)
    assert "review_count: 4" in keys and cards["b.md"][7] == 4  # reps

    def unchanged(where: Path) -> None:
        assert owned(vault / "b.md") == keys  # the replay rewrote nothing
        assert card_states(where) == cards
        assert [r[1:] for r in review_log(where)] == [r[1:] for r in reviews]
        assert live_paths(where) == ["b.md"]  # no live row left for the old path

    cli(capsys, vault, data, "sync", "--full", now="2026-01-25T11:00")
    unchanged(data)
    cli(capsys, vault, tmp_path / "device2", "due", now="2026-01-25T11:00")
    unchanged(tmp_path / "device2")
    remove_database(data)
    cli(capsys, vault, data, "due", now="2026-01-25T11:00")
    unchanged(data)
    assert len(moves_logged(vault)) == 1  # nobody logged the rename again


def test_undo_after_a_rename_follows_the_note(capsys, tmp_path):
    vault, data = reviewed_then_renamed(capsys, tmp_path)
    before_last = owned(vault / "b.md")
    out = cli(capsys, vault, data, "undo", now="2026-01-06T10:00")
    assert "b.md" in out and "a.md" not in out
    assert owned(vault / "b.md") != before_last and "review_count: 2" in owned(vault / "b.md")
    assert [(m["note"], m["to"]) for m in moves_logged(vault)] == [("a.md", "b.md")]
    remove_database(data)
    cli(capsys, vault, data, "due", now="2026-01-06T11:00")
    assert live_paths(data) == ["b.md"] and card_states(data)["b.md"][7] == 2


def _review(event_id: str, path: str, at: datetime) -> Event:
    return Event(event_id, EventKind.REVIEW, at, "dev", path, {"rating": 3, "fuzz": False})


def _move(event_id: str, old: str, new: str, at: datetime) -> Event:
    return Event(event_id, EventKind.MOVE, at, "dev", old, {"to": new})


def test_events_of_one_instant_replay_in_the_order_the_device_logged_them():
    t0 = datetime(2026, 1, 1, 10, tzinfo=timezone.utc)
    t1 = t0 + timedelta(days=20)
    for _ in range(100):  # random ids: any tie-break by id gets some of these wrong
        ids = [uuid.uuid4().hex for _ in range(5)]
        # `rate b.md` noticing the rename: the move, then the review, both at t1
        noticed_by_rate = [_review(ids[0], "a.md", t0), _review(ids[1], "a.md", t0 + timedelta(days=1)),
                           _move(ids[2], "a.md", "b.md", t1), _review(ids[3], "b.md", t1)]
        notes = replay(noticed_by_rate, Settings()).notes
        assert [(n.path, n.reviews, n.live) for n in notes] == [("b.md", 3, True)]
        # a review, then the rename noticed the same instant (a frozen --now), then a review
        reviewed_then_moved = [_review(ids[0], "a.md", t0), _review(ids[1], "a.md", t1),
                               _move(ids[2], "a.md", "b.md", t1), _review(ids[3], "b.md", t1)]
        notes = replay(reviewed_then_moved, Settings()).notes
        assert [(n.path, n.reviews, n.live) for n in notes] == [("b.md", 3, True)]


HOLD_LOCK = """
import sys, time
from pathlib import Path
from studyapp.context import build_context
from studyapp.reviews import ReviewService

vault, data, ready, go = sys.argv[1:5]
ctx = build_context(vault=vault, data_dir=data, now="2026-01-06T10:00")
with ReviewService(ctx) as service, service.writer_lock.hold():
    Path(ready).touch()
    while not Path(go).exists():
        time.sleep(0.01)
    service.load()  # notices the rename too, and logs it, while holding the lock
"""


def test_a_rename_is_logged_under_the_writer_lock_and_only_once(capsys, tmp_path):
    vault, data = reviewed_then_renamed(capsys, tmp_path)
    ready, go = tmp_path / "ready", tmp_path / "go"
    holder = subprocess.Popen([sys.executable, "-c", HOLD_LOCK, str(vault), str(data), str(ready), str(go)],
                              env=dict(os.environ, PYTHONPATH=str(ROOT)))
    try:
        deadline = time.monotonic() + 30
        while not ready.exists():
            assert holder.poll() is None and time.monotonic() < deadline
            time.sleep(0.01)
        ctx = build_context(vault=str(vault), data_dir=str(data), now="2026-01-06T10:00")
        seen: list = []

        def load() -> None:
            with ReviewService(ctx) as service:
                seen.append(service.load())

        noticer = threading.Thread(target=load)
        noticer.start()
        time.sleep(0.5)
        assert moves_logged(vault) == [] and noticer.is_alive()  # waits for the writer
        go.touch()
        noticer.join(30)
        assert holder.wait(30) == 0 and not noticer.is_alive() and seen
    finally:
        go.touch()
        holder.wait(30)
    assert len(moves_logged(vault)) == 1
    assert live_paths(data) == ["b.md"]
