"""Statistics on a small, hand-checked history; optimize refuses a short log."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone

import pytest
from fsrs import Rating, ReviewLog, State

from studyapp.cards import NoteCard
from studyapp.config import Settings
from studyapp.optimize import NotEnoughHistory, countable_reviews, fit_parameters
from studyapp.pairing import Pairing, drills_for
from studyapp.schedule import build_scheduler, new_card
from studyapp.stats import compute_stats, format_stats
from studyapp.store import CardRow, Store, utc_text

# Noon UTC keeps every review on the same calendar day in any timezone from UTC-11 to UTC+11.
NOW = datetime(2026, 5, 20, 12, 0, tzinfo=timezone.utc)


@dataclass
class FakeNote:
    path: str
    tags: list[str] = field(default_factory=list)
    drills: list[str] = field(default_factory=list)

    def pairing(self) -> Pairing:
        """Its declared drills, as `Note.pairing` gives them (the statistics' one notion)."""
        return drills_for({"drills": self.drills}, "")


def _review(store, key, days_ago, rating, state_before):
    at = NOW - timedelta(days=days_ago)
    store.insert_review({
        "note_key": key, "rating": rating, "reviewed_at": utc_text(at),
        "state_before": state_before, "state_after": State.Review,
        "due_after": utc_text(at + timedelta(days=3)), "scheduled_days": 3, "path": "x.md",
    })


@pytest.fixture
def store(tmp_path):
    with Store(tmp_path / "db.sqlite3") as s:
        yield s


def test_stats_on_a_known_history(store):
    a = store.add_note("a.md", "h", "A", NOW)
    b = store.add_note("b.md", "h2", "B", NOW)
    # Days ago: 0, 1, 2 (a streak of 3), then 5, 20 and 100.
    _review(store, a, 0, Rating.Good, State.Review)      # counts for 7/30/365
    _review(store, b, 0, Rating.Again, State.Review)     # a failure in every window
    _review(store, a, 1, Rating.Good, State.Learning)    # learning step: not in retention
    _review(store, b, 2, Rating.Hard, State.Review)
    _review(store, a, 5, Rating.Again, None)             # new card: not in retention
    _review(store, b, 20, Rating.Easy, State.Review)     # 30 and 365 only
    _review(store, a, 100, Rating.Again, State.Review)   # 365 only

    scheduler = build_scheduler(Settings(), fuzz=False)
    card_a = CardRow(a, State.Review, None, 30.0, 5.0, NOW + timedelta(days=2), NOW)
    card_b = CardRow(b, State.Relearning, 0, 2.0, 7.0, NOW + timedelta(minutes=10), NOW)
    overdue = CardRow(0, State.Review, None, 4.0, 5.0, NOW - timedelta(days=3),
                      NOW - timedelta(days=7))
    suspended = CardRow(0, State.Review, None, 4.0, 5.0, NOW, NOW, suspended=True)
    items = [
        NoteCard(FakeNote("a.md", ["attn"]), a, card_a, False),
        NoteCard(FakeNote("b.md", ["attn", "masks"]), b, card_b, False),
        NoteCard(FakeNote("c.md", ["masks"]), None, overdue, False),
        NoteCard(FakeNote("d.md"), None, suspended, False),
        NoteCard(FakeNote("e.md", ["masks"]), None, new_card(0, NOW), True),
    ]
    stats = compute_stats(store, scheduler, items, NOW)

    day = lambda n: (NOW - timedelta(days=n)).date().isoformat()  # noqa: E731
    assert stats.reviews_per_day == {day(100): 1, day(20): 1, day(5): 1, day(2): 1,
                                     day(1): 1, day(0): 2}
    assert stats.total_reviews == 7
    assert stats.streak == 3
    by_window = {r.days: (r.reviews, r.passed) for r in stats.retention}
    assert by_window == {7: (3, 2), 30: (4, 3), 365: (5, 3)}
    assert stats.retention[0].retention == pytest.approx(2 / 3)
    assert stats.counts_by_state == {"new": 1, "learning": 0, "review": 2, "relearning": 1,
                                     "suspended": 1}
    forecast = dict(stats.forecast)
    assert forecast[day(0)] == 2          # b's relearning step and the overdue c
    assert forecast[(NOW + timedelta(days=2)).date().isoformat()] == 1
    assert sum(forecast.values()) == 3 and len(stats.forecast) == 30
    # a: stability 30 >= 21 and reviewed just now (R = 1) -> 1.0; b: 2/21 * 1; new e: 0.
    tags = stats.mastery_by_tag
    assert tags["attn"]["notes"] == 2
    assert tags["attn"]["mastery"] == pytest.approx((1.0 + 2 / 21) / 2, abs=0.002)
    assert tags["masks"]["notes"] == 3
    assert "True retention: 7d 66.7% (2/3)" in format_stats(stats)
    assert stats.to_dict()["forecast"][0] == {"date": day(0), "due": 2}


def test_streak_survives_until_the_day_ends(store):
    key = store.add_note("a.md", "h", "A", NOW)
    _review(store, key, 1, Rating.Good, State.Review)
    _review(store, key, 2, Rating.Good, State.Review)
    scheduler = build_scheduler(Settings(), fuzz=False)
    assert compute_stats(store, scheduler, [], NOW).streak == 2
    assert compute_stats(store, scheduler, [], NOW + timedelta(days=1)).streak == 0


def test_optimize_refuses_with_little_history():
    t0 = datetime(2026, 1, 1, tzinfo=timezone.utc)
    logs = [ReviewLog(card, Rating.Good, t0 + timedelta(days=day), None)
            for card in range(10) for day in range(0, 50, 5)]
    assert countable_reviews(logs) == 90
    with pytest.raises(NotEnoughHistory, match="at least 512"):
        fit_parameters(logs)


def test_same_day_reviews_do_not_count_towards_optimizing():
    t0 = datetime(2026, 1, 1, tzinfo=timezone.utc)
    logs = [ReviewLog(1, Rating.Good, t0 + timedelta(minutes=m), None) for m in (0, 1, 10)]
    logs.append(ReviewLog(1, Rating.Good, t0 + timedelta(days=2), None))
    assert countable_reviews(logs) == 1


def test_mastery_table_aligns_chinese_tags():
    from datetime import date

    from studyapp.stats import Stats
    from studyapp.textwidth import display_width

    stats = Stats(today=date(2026, 3, 10), total_reviews=0, reviews_per_day={}, forecast=[],
                  retention=[], streak=0, counts_by_state={},
                  mastery_by_tag={"Attention": {"notes": 3, "mastery": 0.5},
                                  "注意力/掩码": {"notes": 1, "mastery": 0.25}})
    rows = format_stats(stats).split("Mastery by tag:\n")[1].splitlines()
    columns = {display_width(row[: row.index("0.")]) for row in rows}
    assert len(columns) == 1, rows
    assert rows[1].endswith("(1 note)")
