"""Statistics and `optimize` at their edges: a frozen clock set before some reviews, a streak
longer than the heatmap's year, another device's log that arrived since the last command."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from fsrs import Rating, State

from studyapp.cli import main
from studyapp.config import Settings
from studyapp.history.events import EventKind, new_event
from studyapp.schedule import build_scheduler
from studyapp.stats import compute_stats, reviewed_today_and_streak, weekly_retention
from studyapp.store import Store, utc_text

# Noon UTC keeps every review on the same calendar day in any timezone from UTC-11 to UTC+11.
NOW = datetime(2026, 5, 20, 12, 0, tzinfo=timezone.utc)
OTHER_DEVICE = "feedfacefeedfacefeedfacefeedface"


def _review(store: Store, key: int, at: datetime, rating=Rating.Good, state_before=State.Review):
    store.insert_review({
        "note_key": key, "rating": rating, "reviewed_at": utc_text(at),
        "state_before": state_before, "state_after": State.Review,
        "due_after": utc_text(at + timedelta(days=3)), "scheduled_days": 3, "path": "a.md",
    })


@pytest.fixture
def store(tmp_path):
    with Store(tmp_path / "db.sqlite3") as s:
        yield s


def _stats(store: Store, now: datetime = NOW):
    return compute_stats(store, build_scheduler(Settings(), fuzz=False), [], now)


# -- a frozen clock before some reviews: they have not happened yet ------------------------------

def test_reviews_after_now_count_nowhere(store):
    key = store.add_note("a.md", "h", "A", NOW)
    for days_ago in range(10):                      # 10 days up to today, all passed
        _review(store, key, NOW - timedelta(days=days_ago))
    _review(store, key, NOW + timedelta(minutes=30), Rating.Again)  # later today
    for days_after in range(1, 300):                # the rest of the year, all failed
        _review(store, key, NOW + timedelta(days=days_after), Rating.Again)

    stats = _stats(store)
    today = NOW.date().isoformat()
    assert stats.total_reviews == 10
    assert max(stats.reviews_per_day) == today and stats.reviews_per_day[today] == 1
    assert sum(stats.reviews_per_day.values()) == 10
    assert {r.days: (r.reviews, r.passed) for r in stats.retention} == {
        7: (7, 7), 30: (10, 10), 365: (10, 10)}
    assert stats.streak == 10
    assert reviewed_today_and_streak(store, NOW) == (1, 10)
    assert [share for _week, share in weekly_retention(store, NOW)] == [1.0, 1.0]


# -- a streak longer than the heatmap's year ------------------------------------------------------

@pytest.mark.parametrize("days", [365, 366, 367, 400, 800])
def test_streak_is_not_capped_at_the_heatmaps_year(store, days):
    key = store.add_note("a.md", "h", "A", NOW)
    for days_ago in range(days):
        _review(store, key, NOW - timedelta(days=days_ago))
    _review(store, key, NOW - timedelta(days=days + 1))  # a gap, then an older review

    assert _stats(store).streak == days
    assert reviewed_today_and_streak(store, NOW) == (1, days)
    # yesterday's streak still stands while today has no review yet
    assert _stats(store, NOW + timedelta(days=1)).streak == days


def test_a_streak_through_the_first_day_the_year_reads_only_in_part(store):
    """The year's reviews start at `now`'s time of day 366 days ago: a review earlier that day
    is not among them, yet it extends the streak."""
    key = store.add_note("a.md", "h", "A", NOW)
    for days_ago in range(366):
        _review(store, key, NOW - timedelta(days=days_ago))
    _review(store, key, NOW - timedelta(days=366, hours=1))  # 11:00 UTC: the same local day
    assert _stats(store).streak == 367


def test_a_short_streak_reads_only_the_last_year(store, monkeypatch):
    """Stats run on every start of the app: an old history is not read for a streak of days."""
    key = store.add_note("a.md", "h", "A", NOW)
    for days_ago in [*range(3), *range(5, 1500)]:
        _review(store, key, NOW - timedelta(days=days_ago))
    asked: list[datetime | None] = []
    for name in ("reviews", "review_times"):
        if not hasattr(store, name):
            continue
        real = getattr(store, name)

        def spy(*args, real=real, **kwargs):
            asked.append(kwargs.get("since", args[0] if args else None))
            return real(*args, **kwargs)
        monkeypatch.setattr(store, name, spy)

    assert _stats(store).streak == 3
    assert asked and all(since is not None and since >= NOW - timedelta(days=367) for since in asked)


# -- optimize reads every device's reviews, and never re-times reviews already made ----------------

NOTE = """---
created: 2024-01-01
last_reviewed:
next_review: 2024-01-01
review_count: 0
difficulty: medium
mastery_level: 0.0
tags: [topic]
related_outlines: []
---
# Note {i}

Answer {i}
"""
LOG_START = datetime(2025, 1, 1, 8, tzinfo=timezone.utc)
LAST_REVIEW = LOG_START + timedelta(days=59, seconds=63)


def _vault_with_notes(tmp_path: Path) -> list[str]:
    vault = tmp_path / "vault"
    (vault / "topic").mkdir(parents=True)
    for i in range(1, 11):
        (vault / "topic" / f"n{i}.md").write_text(NOTE.format(i=i), encoding="utf-8")
    return ["--vault", str(vault), "--data-dir", str(tmp_path / "data")]


def _another_devices_log(tmp_path: Path) -> None:
    """600 reviews of 10 notes, one a day each for 60 days (590 a day after the previous),
    as a sync tool brings another device's log file into the vault."""
    folder = tmp_path / "vault" / ".studyapp" / "log"
    folder.mkdir(parents=True, exist_ok=True)
    lines = []
    for day in range(60):
        for i in range(10):
            at = LOG_START + timedelta(days=day, seconds=7 * i)
            event = new_event(EventKind.REVIEW, at, OTHER_DEVICE, f"topic/n{i + 1}.md",
                              rating=int(Rating.Again if (day + i) % 7 == 0 else Rating.Good),
                              duration_ms=5000)
            lines.append(json.dumps(event.to_json()) + "\n")
    (folder / f"{OTHER_DEVICE}.jsonl").write_text("".join(lines), encoding="utf-8")


def _params_events(tmp_path: Path) -> list[dict]:
    folder = tmp_path / "vault" / ".studyapp" / "log"
    return [event for file in folder.glob("*.jsonl")
            for event in map(json.loads, file.read_text(encoding="utf-8").splitlines())
            if event["kind"] == EventKind.PARAMS.value]


def test_optimize_fits_on_another_devices_log_that_arrived_since_the_last_command(tmp_path, capsys):
    options = _vault_with_notes(tmp_path)
    later = ["--now", "2026-10-20T12:00:00+00:00"]
    assert main(["stats", *options, *later]) == 0  # the database exists and holds no review
    _another_devices_log(tmp_path)
    capsys.readouterr()

    assert main(["optimize", *options, *later]) == 0, capsys.readouterr().err
    assert "log loss on 590 reviews" in capsys.readouterr().out

    for file in (tmp_path / "data").glob("studyapp.sqlite3*"):  # "deleting the database is safe"
        file.unlink()
    assert main(["optimize", *options, *later]) == 0, capsys.readouterr().err
    assert "log loss on 590 reviews" in capsys.readouterr().out


def test_optimize_refuses_a_time_before_reviews_already_logged(tmp_path, capsys):
    """A fit logged at a time before some reviews would re-schedule those reviews with the new
    parameters on every replay (`sync --full`, another device) but not in this cache."""
    options = _vault_with_notes(tmp_path)
    _another_devices_log(tmp_path)
    capsys.readouterr()

    earlier = LAST_REVIEW - timedelta(days=1)
    assert main(["optimize", *options, "--now", earlier.isoformat()]) == 1
    err = capsys.readouterr().err
    assert "after the time given" in err and "Traceback" not in err
    assert _params_events(tmp_path) == []
    with Store(tmp_path / "data" / "studyapp.sqlite3") as store:
        assert store.latest_params() is None

    # at (or after) the last review it fits
    assert main(["optimize", *options, "--now", LAST_REVIEW.isoformat()]) == 0, capsys.readouterr().err
    assert len(_params_events(tmp_path)) == 1
