"""FSRS wrapping: intervals over a simulated month, relearning, legacy migration, mastery."""

from __future__ import annotations

from datetime import date, datetime, timedelta, timezone

import pytest
from fsrs import Rating, State

from studyapp.config import Settings
from studyapp.mastery import mastery
from studyapp.schedule import (
    build_scheduler,
    format_interval,
    legacy_card,
    new_card,
    parse_rating,
    preview,
    retrievability,
    review,
    start_of_day,
)

T0 = datetime(2026, 3, 2, 8, 0, tzinfo=timezone.utc)


@pytest.fixture
def scheduler():
    return build_scheduler(Settings(), fuzz=False)


def test_a_month_of_good_reviews_gives_growing_intervals(scheduler):
    card, now = new_card(1, T0), T0
    intervals = []
    while now < T0 + timedelta(days=31):
        card = review(scheduler, card, Rating.Good, now)
        intervals.append(card.due - now)
        now = card.due
    day_intervals = [i.days for i in intervals if i >= timedelta(days=1)]
    assert card.state == State.Review
    assert len(day_intervals) >= 3
    assert day_intervals == sorted(day_intervals) and day_intervals[-1] > day_intervals[0]
    # A month of "good" should be well past a week but nowhere near the maximum interval.
    assert 7 < day_intervals[-1] < 365
    assert card.reps == len(intervals) and card.lapses == 0


def test_again_brings_the_note_back_within_the_session(scheduler):
    card = new_card(1, T0)
    card = review(scheduler, card, Rating.Again, T0)
    assert card.state == State.Learning and card.due - T0 <= timedelta(minutes=10)
    # A graduated card that lapses relearns in minutes, not days, and counts a lapse.
    card = review(scheduler, card, Rating.Easy, T0 + timedelta(minutes=1))
    assert card.state == State.Review
    later = card.due + timedelta(days=1)
    lapsed = review(scheduler, card, Rating.Again, later)
    assert lapsed.state == State.Relearning
    assert lapsed.due - later == timedelta(minutes=10)
    assert lapsed.lapses == 1 and lapsed.stability < card.stability


def test_legacy_history_keeps_its_due_date_and_interval(scheduler):
    card = legacy_card(7, review_count=5, last_reviewed=date(2026, 2, 20),
                       next_review=date(2026, 3, 12), difficulty_label="medium",
                       scheduler=scheduler, today=date(2026, 3, 2))
    assert card.state == State.Review and card.legacy and card.reps == 5
    assert card.due == start_of_day(date(2026, 3, 12))
    assert card.stability == 20.0  # 2026-02-20 -> 2026-03-12
    # Not due before its date; a good review on the date schedules beyond the old interval.
    due_day_noon = start_of_day(date(2026, 3, 12)) + timedelta(hours=12)
    after = review(scheduler, card, Rating.Good, due_day_noon)
    assert after.due - due_day_noon > timedelta(days=20)


def test_legacy_without_last_reviewed_reads_the_ladder(scheduler):
    card = legacy_card(7, review_count=3, last_reviewed=None, next_review=date(2026, 3, 10),
                       difficulty_label="hard", scheduler=scheduler, today=date(2026, 3, 2))
    # hard ladder [1,1,3,...]: the 3rd review scheduled 3 days out.
    assert card.stability == 3.0
    assert card.last_review == start_of_day(date(2026, 3, 7))
    easy = legacy_card(8, review_count=3, last_reviewed=None, next_review=date(2026, 3, 10),
                       difficulty_label="easy", scheduler=scheduler, today=date(2026, 3, 2))
    assert easy.difficulty < card.difficulty  # the author's label seeds FSRS difficulty


def test_preview_has_one_growing_interval_per_rating(scheduler):
    card = review(scheduler, new_card(1, T0), Rating.Easy, T0)
    now = card.due
    spans = preview(scheduler, card, now)
    assert list(spans) == ["again", "hard", "good", "easy"]
    assert spans["again"] < spans["hard"] < spans["good"] < spans["easy"]
    assert format_interval(spans["again"]) == "10m"


def test_format_interval():
    assert format_interval(timedelta(minutes=1)) == "1m"
    assert format_interval(timedelta(hours=5)) == "5h"
    assert format_interval(timedelta(days=4)) == "4d"
    assert format_interval(timedelta(days=75)) == "2.5mo"
    assert format_interval(timedelta(days=730)) == "2.0y"


def test_parse_rating():
    assert parse_rating("Good") == Rating.Good and parse_rating("1") == Rating.Again
    with pytest.raises(ValueError):
        parse_rating("meh")


def test_mastery_rises_with_recall_and_drills_and_falls_with_a_lapse(scheduler):
    card, now = new_card(1, T0), T0
    assert mastery(card, now, scheduler) == 0.0
    card = review(scheduler, card, Rating.Easy, now)  # graduate at once
    now = card.due
    values = [mastery(card, now, scheduler)]
    for _ in range(4):
        card = review(scheduler, card, Rating.Good, now)
        now = card.due
        values.append(mastery(card, now, scheduler))
    assert values == sorted(values) and 0 < values[0] < values[-1] <= 1
    # By hand: stability >= 21 days caps the first factor at 1, and R at the due time is the
    # desired retention 0.9.
    assert card.stability >= 21 and values[-1] == pytest.approx(0.9, abs=0.01)
    lapsed = review(scheduler, card, Rating.Again, now)
    assert mastery(lapsed, now, scheduler) < values[-1]
    # Drills: a quarter of mastery; half of the note's drills passed adds 0.125.
    plain = mastery(card, now, scheduler)
    with_drills = mastery(card, now, scheduler, drills=["sdpa", "masks"],
                          drill_status={"sdpa": "passed", "masks": "failing"})
    assert with_drills == pytest.approx(0.75 * plain + 0.125, abs=0.002)


def test_retrievability_decays_with_time(scheduler):
    card = review(scheduler, new_card(1, T0), Rating.Easy, T0)
    r1 = retrievability(scheduler, card, T0 + timedelta(days=2))
    r2 = retrievability(scheduler, card, T0 + timedelta(days=20))
    assert 1 > r1 > r2 > 0
