"""Rebuilding the review database (a cache) from the review log.

Run: python benchmarks/history_replay.py [--events 100000] [--notes 2000] [--devices 2] [--json]

Writes a vault of `--notes` notes and a log of `--events` events spread over `--devices`
device files (reviews over two years, 1% undone, 5% made on a device that had not synced, a
drill attempt every 200 events), then times:
  - `read`: parsing every device's file;
  - `replay`: the events, deduplicated and in time order, through FSRS;
  - `rebuild`: what a start with a deleted database does (`ReviewService` opening: read,
    replay, write the database), with the notes' review keys already in agreement;
  - `first_sync`: the same with every note's keys to rewrite (a device seeing the log first).
Goal (issue 14): rebuild under 3 s for 100,000 events. The load average is printed too.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import sys
import tempfile
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from fsrs import Rating

from studyapp.config import Settings
from studyapp.context import build_context
from studyapp.history.eventlog import EventLog, vault_log
from studyapp.history.events import EventKind, new_event
from studyapp.history.replay import (
    card_fields,
    replay,
    review_for_event,
    scheduler_fingerprint,
)
from studyapp.schedule import build_scheduler, new_card
from studyapp.store import CardRow

NOTE = """---
last_reviewed: null
next_review: '2024-01-01'
review_count: 0
mastery_level: 0.0
---
# Concept {i}

Body of note {i}.
"""


def make_log(folder: Path, notes: int, events: int, devices: int, seed: int = 7,
             unsynced: float = 0.05) -> None:
    """Events as the app records them: each review carries the card it started from and the
    one FSRS made, except a share `unsynced` made on a device that had not yet seen another's
    review of the note (the replay runs FSRS for those, and for what follows an undo)."""
    rng = random.Random(seed)
    start = datetime(2024, 1, 1, 8, 0, tzinfo=timezone.utc)
    span = timedelta(days=730).total_seconds()
    names = [f"device{d}" for d in range(devices)]
    moments = sorted(start + timedelta(seconds=rng.random() * span) for _ in range(events))
    scheduler = build_scheduler(Settings())
    fingerprint = scheduler_fingerprint(scheduler)
    cards: dict[str, CardRow] = {}
    per_device: dict[str, list] = {name: [] for name in names}
    made = 0
    while made < events:
        at, device = moments[made], rng.choice(names)
        if made % 200 == 199:
            per_device[device].append(new_event(
                EventKind.DRILL, at, device, None, drill="sdpa",
                verdict=rng.choice(["pass", "fail"]), summary="", duration_ms=900))
            made += 1
            continue
        note = f"n{rng.randrange(notes):05d}.md"
        rating = rng.choices([1, 2, 3, 4], [10, 15, 60, 15])[0]
        event = new_event(EventKind.REVIEW, at, device, note, rating=rating,
                          duration_ms=rng.randrange(2000, 30000), fuzz=True,
                          values_before={"review_count": 0})
        before = cards.get(note) or new_card(0, at)
        after = review_for_event(scheduler, before, Rating(rating), at, None, event.id)
        if rng.random() >= unsynced:
            event.data.update(before=card_fields(before), after=card_fields(after),
                              sched=fingerprint)
        per_device[device].append(event)
        made += 1
        if rng.random() < 0.01 and made < events:  # undone at once: the card stays as it was
            per_device[device].append(new_event(EventKind.UNDO, at + timedelta(seconds=5),
                                                device, note, review=event.id))
            made += 1
        else:
            cards[note] = after
    for name, items in per_device.items():
        EventLog(folder, name).append(*items)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=100_000)
    parser.add_argument("--notes", type=int, default=2_000)
    parser.add_argument("--devices", type=int, default=2)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()

    from studyapp.reviews import ReviewService

    root = Path(tempfile.mkdtemp(prefix="history-replay-"))
    try:
        vault, data = root / "vault", root / "data"
        vault.mkdir()
        for i in range(args.notes):
            (vault / f"n{i:05d}.md").write_text(NOTE.format(i=i))
        ctx = build_context(vault=str(vault), data_dir=str(data), seed=False)
        folder = vault_log(ctx.paths)
        make_log(folder, args.notes, args.events, args.devices)
        log_bytes = sum(p.stat().st_size for p in folder.glob("*.jsonl"))

        t = time.perf_counter()
        contents = EventLog(folder, "reader").read()
        read_s = time.perf_counter() - t
        t = time.perf_counter()
        replayed = replay(contents.events, Settings())
        replay_s = time.perf_counter() - t

        t = time.perf_counter()
        with ReviewService(ctx) as service:
            first = service.synced
        first_s = time.perf_counter() - t

        for name in ("studyapp.sqlite3", "studyapp.sqlite3-wal", "studyapp.sqlite3-shm"):
            (data / name).unlink(missing_ok=True)
        t = time.perf_counter()
        with ReviewService(ctx) as service:
            rebuilt = service.synced
            reviews = service.store.review_count()
        rebuild_s = time.perf_counter() - t
    finally:
        shutil.rmtree(root, ignore_errors=True)

    result = {
        "events": args.events, "distinct_events": replayed.events, "devices": args.devices,
        "notes": args.notes, "log_mib": round(log_bytes / 2**20, 1),
        "reviews_standing": reviews, "read_s": round(read_s, 3), "replay_s": round(replay_s, 3),
        "rebuild_s": round(rebuild_s, 3), "rebuild_notes_written": len(rebuilt.written),
        "first_sync_s": round(first_s, 3), "first_sync_notes_written": len(first.written),
        "goal_rebuild_s": 3.0, "loadavg": [round(x, 2) for x in os.getloadavg()],
    }
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        for key, value in result.items():
            print(f"{key:26} {value}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
