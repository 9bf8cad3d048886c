"""Today's "Mastery by topic" computes mastery only for the notes of the topics it shows, and
shows exactly what the statistics say for them (issue 15: pairing every note's text to find
its drills made Today's cold start slow)."""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone

from hypothesis import given, settings
from hypothesis import strategies as st

from studyapp.cards import NoteCard
from studyapp.config import Settings
from studyapp.pairing import Pairing, drills_for
from studyapp.schedule import build_scheduler, new_card
from studyapp.stats import compute_stats, top_topics, top_topics_mastery

NOW = datetime(2026, 5, 20, 12, 0, tzinfo=timezone.utc)
SCHEDULER = build_scheduler(Settings())
TAGS = ["注意力", "掩码", "位置编码", "优化", "归一化", "笔记/a.md", "b.md", "x"]


@dataclass
class CountingNote:
    path: str
    tags: list[str]
    drills: list[str] = field(default_factory=list)
    paired: list[str] = field(default_factory=list)

    def pairing(self) -> Pairing:
        self.paired.append(self.path)
        return drills_for({"drills": self.drills}, "")


def items_from(seed: int, count: int) -> list[NoteCard]:
    rng = random.Random(seed)
    items = []
    for i in range(count):
        tags = rng.sample(TAGS, rng.randint(0, 3)) + (["注意力"] if rng.random() < 0.1 else [])
        note = CountingNote(f"n{i}.md", tags, rng.sample(["sdpa", "mha", "causal_mask"], rng.randint(0, 2)))
        card = new_card(i, NOW)
        is_new = rng.random() < 0.3
        if not is_new:
            card.stability = rng.uniform(0.5, 40)
            card.difficulty = rng.uniform(1, 9)
            card.last_review = NOW - timedelta(days=rng.randint(0, 30))
            card.due = card.last_review + timedelta(days=rng.randint(1, 30))
            card.state = 2
        items.append(NoteCard(note, i, card, is_new))
    return items


class Store:
    """What `compute_stats` asks of the store, with no history."""

    def reviews(self, since=None, until=None):
        return []

    def review_times(self, since=None, until=None):
        return []

    def review_count(self, until=None):
        return 0

    def drill_status(self):
        return {"sdpa": "passed", "mha": "failing"}


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 10_000), st.integers(0, 60), st.integers(1, 6))
def test_top_topics_equal_the_statistics(seed, count, rows):
    items = items_from(seed, count)
    expected = top_topics(compute_stats(Store(), SCHEDULER, items, NOW).mastery_by_tag, rows)
    assert top_topics_mastery(items, NOW, SCHEDULER, Store().drill_status(), rows) == expected


def test_notes_outside_the_shown_topics_are_not_paired():
    items = items_from(7, 200)
    shown = top_topics_mastery(items, NOW, SCHEDULER, Store().drill_status(), 2)
    shown_tags = {tag for tag, _ in shown}
    paired = {path for item in items for path in item.note.paired}
    assert paired, "reviewed notes of the shown topics need their drills"
    for item in items:
        if item.note.path in paired:
            assert shown_tags & set(item.note.tags)
        elif not item.is_new:
            assert not shown_tags & set(item.note.tags)
