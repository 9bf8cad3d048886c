"""What the Today screen last showed, kept so that the next start draws it in its first frame.

Loading a 10,000-note vault and computing Today takes about a second even when every cache is
warm; a learner opening the app to see what is due should not wait for it. So each time Today
is computed its summary is saved with what it depends on, and the next start shows it at once,
then loads, computes afresh and draws again. It is only shown while it can still be right:

  * the same vault folder, settings and calendar day;
  * the same review history: every review, undo, suspension and drill result appends to the
    log folder, so its files' sizes change with any of them (made here, by the CLI, or synced
    in from another device);
  * before the first moment a card not due at the time becomes due (`valid_until`).

Notes edited since are seen once the load finishes (it stats every file), and a mastery value
may have decayed by a rounding step; the figures drawn after the load are the truth.
Textual-free and torch-free; any trouble reading the file simply means no snapshot.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass, replace
from datetime import date, datetime, timedelta
from typing import TYPE_CHECKING

from studyapp.views import DrillView, TodaySummary

if TYPE_CHECKING:
    from collections.abc import Iterable
    from pathlib import Path

    from studyapp.cards import NoteCard
    from studyapp.context import Context

SNAPSHOT_FORMAT = 1
"""Bump when `TodaySummary` or the key changes shape: an older file is then ignored."""
LOG_SUFFIX = ".jsonl"
"""`history.eventlog.LOG_SUFFIX`, not imported: checking a snapshot imports no history module
(a test holds the two equal)."""


@dataclass(frozen=True)
class SnapshotKey:
    """Everything outside the vault's notes that Today's figures depend on, cheap to read."""

    vault: str
    day: str
    """The learner's calendar day (local ISO date)."""
    settings: str
    """The settings as they were (daily limits, the log's place, ...), the theme left out."""
    log_folder: str
    """Where the review logs are (`history.eventlog.log_dir`: the vault and settings decide)."""
    history: tuple[tuple[str, int], ...]
    """(file name, size) of each device's review log."""


def snapshot_key(ctx: Context, now: datetime, log_folder: str) -> SnapshotKey:
    """The key for `ctx` at `now`: a few `stat` calls, no database, no note file.
    `log_folder` is `history.eventlog.log_dir`, passed in so that checking a snapshot (before
    the first frame) need not import the history package: it takes the folder the snapshot
    names, which is the same one while the vault and settings are."""
    try:
        with os.scandir(log_folder) as entries:
            sizes = sorted((e.name, e.stat().st_size) for e in entries if e.name.endswith(LOG_SUFFIX))
    except OSError:
        sizes = []
    return SnapshotKey(
        vault=str(ctx.paths.vault_dir.resolve()),
        day=now.astimezone().date().isoformat(),
        settings=repr(replace(ctx.settings, theme="")),
        log_folder=str(log_folder),
        history=tuple(sizes),
    )


def valid_until(items: Iterable[NoteCard], now: datetime, learn_ahead: timedelta) -> datetime:
    """The first moment after `now` when today's queue could change by the clock alone: a card
    becoming due (or, for a learning step, coming within `learn_ahead`), or midnight."""
    soonest = next_midnight(now)
    horizon = soonest + learn_ahead  # a step due after it comes within `learn_ahead` after midnight
    for item in items:
        card = item.card
        due = card.due
        if now < due < horizon and not card.suspended:
            for moment in (due, due - learn_ahead):
                if now < moment < soonest:
                    soonest = moment
    return soonest


def next_midnight(now: datetime) -> datetime:
    """The learner's next local midnight after `now`: a new day's limits, streak and heatmap
    (`schedule.next_day_start`: right across a change to or from summer time, and where the
    clocks skip midnight itself)."""
    from studyapp.schedule import next_day_start  # loaded by then: a Today was computed

    return next_day_start(now)


def first_due(dues: Iterable[datetime], now: datetime, until: datetime) -> datetime:
    """The first of `dues` after `now` and before `until`, else `until`."""
    return min((due for due in dues if now < due < until), default=until)


def save(file: Path, key: SnapshotKey, summary: TodaySummary, until: datetime) -> None:
    """Keep `summary` for the next start (atomically; a failure to write only costs that)."""
    from studyapp.atomic import atomic_write_bytes

    data = {
        "format": SNAPSHOT_FORMAT,
        "key": asdict(key),
        "valid_until": until.isoformat(),
        "summary": {
            **asdict(summary),
            "heatmap": {day.isoformat(): n for day, n in summary.heatmap.items()},
        },
    }
    try:
        atomic_write_bytes(file, json.dumps(data, ensure_ascii=False).encode("utf-8"))
    except OSError:
        pass


def load(file: Path, ctx: Context, now: datetime) -> TodaySummary | None:
    """The saved summary when its key is still `ctx`'s at `now` and it is still valid, else None."""
    try:
        data = json.loads(file.read_bytes())
        if data.get("format") != SNAPSHOT_FORMAT:
            return None
        key = snapshot_key(ctx, now, data["key"]["log_folder"])
        if data["key"] != json.loads(json.dumps(asdict(key))):
            return None
        if not now < datetime.fromisoformat(data["valid_until"]):
            return None
        s = data["summary"]
        return TodaySummary(
            new=s["new"], learning=s["learning"], review=s["review"],
            reviewed_today=s["reviewed_today"], streak=s["streak"],
            heatmap={date.fromisoformat(day): n for day, n in s["heatmap"].items()},
            drills=tuple(DrillView(d["id"], d["title"], tuple(d["tags"]), d["status"], d["last_result"])
                         for d in s["drills"]),
            mastery_by_tag=tuple((tag, value) for tag, value in s["mastery_by_tag"]),
            problems=s["problems"],
            drills_due=s.get("drills_due", 0),
        )
    except (OSError, ValueError, TypeError, KeyError, AttributeError):
        return None
