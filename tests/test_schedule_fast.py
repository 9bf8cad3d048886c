"""The due path's shortcuts give exactly what the plain computation gives."""

from __future__ import annotations

import random
from datetime import date, datetime, timedelta, timezone

from fsrs import Card, Rating, Scheduler, State
from hypothesis import given
from hypothesis import strategies as st

from studyapp.cards import note_cards, session_queue
from studyapp.config import Settings
from studyapp.context import build_context
from studyapp.errors import UserError
from studyapp.review_session import due_listing
from studyapp.reviews import ReviewService
from studyapp.schedule import build_scheduler, legacy_card, retrievability
from studyapp.store import CardRow

T0 = datetime(2026, 5, 10, 9, 0, tzinfo=timezone.utc)
DEFAULT = Scheduler().parameters


@given(
    stability=st.floats(0.01, 40000),
    reviewed=st.datetimes(datetime(2020, 1, 1), datetime(2030, 1, 1), timezones=st.just(timezone.utc)),
    offset=st.timedeltas(timedelta(days=-30), timedelta(days=5000)),
    decay=st.floats(0.1, 0.8),
)
def test_retrievability_matches_fsrs(stability, reviewed, offset, decay):
    scheduler = Scheduler(parameters=DEFAULT[:20] + (decay,))
    row = CardRow(note_key=1, state=int(State.Review), step=None, stability=stability,
                  difficulty=5.0, due=reviewed, last_review=reviewed)
    now = reviewed + offset
    card = Card(card_id=1, state=State.Review, stability=stability, difficulty=5.0,
                due=reviewed, last_review=reviewed)
    assert retrievability(scheduler, row, now) == scheduler.get_card_retrievability(card, now)
    assert retrievability(scheduler, row, now.astimezone(timezone(timedelta(hours=8)))) == \
        scheduler.get_card_retrievability(card, now)


def test_retrievability_of_an_unreviewed_card_is_zero():
    row = CardRow(note_key=1, state=int(State.Learning), step=0, stability=None, difficulty=None,
                  due=T0, last_review=None)
    assert retrievability(Scheduler(), row, T0) == 0.0


def test_remembered_initial_difficulty_follows_the_parameters():
    for parameters in (DEFAULT, DEFAULT[:4] + (3.1, 0.9) + DEFAULT[6:]):
        scheduler = build_scheduler(Settings(), parameters)
        for label, rating in (("easy", Rating.Easy), ("medium", Rating.Good), ("hard", Rating.Hard)):
            card = legacy_card(1, review_count=2, last_reviewed=date(2026, 5, 1),
                               next_review=date(2026, 5, 6), difficulty_label=label,
                               scheduler=scheduler, today=date(2026, 5, 10))
            assert card.difficulty == scheduler._initial_difficulty(rating=rating, clamp=True)


def _random_note(rng: random.Random) -> str:
    if rng.random() < 0.1:
        return "没有元数据块的笔记\n正文\n"
    day = lambda: (date(2026, 5, 10) + timedelta(days=rng.randint(-40, 40))).isoformat()  # noqa: E731
    count = rng.choice([0, 0, 1, 3, 7])
    last = "null" if count == 0 and rng.random() < 0.7 else f"'{day()}'"
    nxt = "null" if rng.random() < 0.1 else f"'{day()}'"
    return (f"---\ncreated: '2026-01-01'\nlast_reviewed: {last}\nnext_review: {nxt}\n"
            f"review_count: {count}\ndifficulty: {rng.choice(['easy', 'medium', 'hard'])}\n"
            "mastery_level: 0.0\n---\n# 题目\n")


def test_due_by_leaves_the_queue_unchanged(tmp_path):
    rng = random.Random(7)
    vault = tmp_path / "vault"
    vault.mkdir()
    for i in range(80):
        (vault / f"n{i:02d}.md").write_text(_random_note(rng), encoding="utf-8")
    ctx = build_context(vault=str(vault), data_dir=str(tmp_path / "data"), now=T0)
    with ReviewService(ctx) as service:
        paths = [n.path for n in service.load().notes]
        for path in rng.sample(paths, 25):  # stored cards: learning, review, later and sooner
            ctx.frozen_now = T0 + timedelta(minutes=rng.randint(-3000, 0))
            try:
                service.record_review(path, rng.choice(["again", "hard", "good", "easy"]))
            except UserError:  # its last_reviewed is later than this instant: refused
                continue
        service.set_suspended(paths[3], True)
        notes = service.vault.load().notes
        checked = 0
        for minutes in (-2000, -5, 0, 1, 11, 30, 600, 1440 * 3, 1440 * 30):
            now = T0 + timedelta(minutes=minutes)
            ctx.frozen_now = now
            full = service.queue(service.note_cards(notes))
            fast = service.queue(note_cards(service.store, service.scheduler, notes, now, due_by=now))
            assert [(i.note.path, i.card, i.is_new) for i in fast] == \
                   [(i.note.path, i.card, i.is_new) for i in full]
            listing = due_listing(ctx, service.vault.load())
            assert [(e.note.path, e.due_at, e.is_new) for e in listing] == \
                   [(i.note.path, i.card.due, i.is_new) for i in full]
            checked += len(full)
        assert checked > 50  # the vault really has due notes of every kind
        unlimited = session_queue(service.note_cards(notes), service.scheduler, T0, 10**6, 10**6)
        assert any(i.card.state == State.Learning and not i.is_new for i in unlimited)
