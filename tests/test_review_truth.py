"""Scheduling state stays truthful: suspend/unsuspend restores exactly, the clock never goes
backwards, and a drill result writes mastery only where the one definition says it may."""

from __future__ import annotations

from datetime import timedelta

import pytest
from test_reviews import LEGACY_NOTE, NEW_NOTE, T0, rows

from studyapp.cli import main
from studyapp.config import Settings
from studyapp.context import build_context
from studyapp.errors import UserError
from studyapp.mastery import mastery
from studyapp.reviews import ReviewService
from studyapp.schedule import build_scheduler, new_card


@pytest.fixture
def vault(tmp_path):
    root = tmp_path / "vault"
    (root / "attn").mkdir(parents=True)
    (root / "attn" / "scale.md").write_bytes(NEW_NOTE.encode())
    (root / "attn" / "mask.md").write_bytes(LEGACY_NOTE.replace("\n", "\r\n").encode())
    return root


@pytest.fixture
def ctx(vault, tmp_path):
    return build_context(vault=str(vault), data_dir=str(tmp_path / "data"), now=T0)


@pytest.fixture
def service(ctx):
    with ReviewService(ctx) as s:
        s.load()
        yield s


def _item(service, path):
    (item,) = [i for i in service.note_cards(service.vault.load().notes) if i.note.path == path]
    return item


def test_suspend_then_unsuspend_leaves_a_new_note_new(service, ctx):
    before = _item(service, "attn/scale.md")
    assert before.is_new
    cards_before = rows(service, "cards")
    assert service.set_suspended("attn/scale.md", True)
    assert service.set_suspended("attn/scale.md", False)
    after = _item(service, "attn/scale.md")
    assert after.is_new, "an unsuspended new note must stay in the new queue"
    assert (after.card.state, after.card.due, after.card.stability) == (
        before.card.state, before.card.due, before.card.stability)
    assert rows(service, "cards") == cards_before
    # it still counts against the daily new limit, not as an overdue review
    ctx.settings.new_per_day = 0
    queue = service.queue(service.note_cards(service.vault.load().notes))
    assert "attn/scale.md" not in [i.note.path for i in queue]


def test_suspend_then_unsuspend_keeps_a_reviewed_card_exactly(service, ctx):
    service.record_review("attn/mask.md", "good")
    cards_before = rows(service, "cards")
    service.set_suspended("attn/mask.md", True)
    service.set_suspended("attn/mask.md", False)
    assert rows(service, "cards") == cards_before


def test_a_stored_never_reviewed_card_counts_as_new(service, ctx):
    """Databases where an older version left such a row (suspend, then unsuspend) heal on read."""
    key = service.store.add_note("attn/scale.md", None, None, T0)
    card = new_card(key, T0 - timedelta(days=400))
    service.store.put_card(card)
    item = _item(service, "attn/scale.md")
    assert item.is_new
    result = service.record_review("attn/scale.md", "good")
    (review,) = service.store.reviews()
    assert review.state_before is None, "its first review is a new card's, for the daily limit"
    assert result.state == "learning"


def test_rating_earlier_than_the_last_review_is_refused(service, ctx, vault):
    service.record_review("attn/scale.md", "good")
    path = vault / "attn" / "scale.md"
    before = path.read_bytes()
    ctx.frozen_now = T0 - timedelta(days=3)
    with pytest.raises(UserError, match="last reviewed"):
        service.record_review("attn/scale.md", "good")
    assert path.read_bytes() == before
    assert len(service.store.reviews()) == 1


def test_rating_before_the_files_last_reviewed_day_is_refused(service, ctx, vault):
    # the legacy note says last_reviewed 2026-03-27; the database knows nothing of it
    ctx.frozen_now = T0.replace(year=2020)
    with pytest.raises(UserError, match="2026-03-27"):
        service.record_review("attn/mask.md", "good")
    assert service.store.reviews() == []


def test_cli_rate_with_an_earlier_now_exits_with_one_line(vault, tmp_path, capsys):
    common = ["--vault", str(vault), "--data-dir", str(tmp_path / "d")]
    assert main(["rate", "attn/scale.md", "--rating", "good", *common, "--now", "2026-04-06"]) == 0
    text = (vault / "attn" / "scale.md").read_bytes()
    capsys.readouterr()
    assert main(["rate", "attn/scale.md", "--rating", "good", *common, "--now", "2020-01-01"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "last reviewed" in err and "Traceback" not in err
    assert (vault / "attn" / "scale.md").read_bytes() == text


def test_never_reviewed_mastery_is_zero_even_with_passed_drills():
    scheduler = build_scheduler(Settings(), fuzz=False)
    status = {"sdpa": "passed"}
    assert mastery(None, T0, scheduler, ["sdpa"], status) == 0.0
    assert mastery(new_card(1, T0), T0, scheduler, ["sdpa"], status) == 0.0


def test_a_drill_pass_writes_only_reviewed_notes_it_trains(service, vault):
    """The drills that train a note are declared, else suggested (`mastery.trained_drills`);
    a note never reviewed keeps mastery 0 and is never written."""
    declared = NEW_NOTE.replace("related_outlines: []", "related_outlines: []\ndrills: [sdpa]")
    (vault / "attn" / "declared-unreviewed.md").write_text(declared, encoding="utf-8")
    (vault / "attn" / "declared-reviewed.md").write_text(declared, encoding="utf-8")
    # suggested by its text (scaled_dot_product_attention), never declared
    suggested = NEW_NOTE.replace("自己写的测试正文。", "F.scaled_dot_product_attention(q, k, v) 缩放点积")
    (vault / "attn" / "suggested.md").write_text(suggested, encoding="utf-8")
    (vault / "attn" / "suggested-unreviewed.md").write_text(suggested, encoding="utf-8")
    service.record_review("attn/declared-reviewed.md", "good")
    service.record_review("attn/suggested.md", "good")
    untouched = {p: (vault / p).read_bytes() for p in
                 ("attn/declared-unreviewed.md", "attn/suggested-unreviewed.md", "attn/scale.md")}
    verdict = {"drill": "sdpa", "file": "sdpa.py", "status": "pass", "summary": "", "seconds": 0.1}
    assert sorted(service.record_drill_result(verdict)) == ["attn/declared-reviewed.md", "attn/suggested.md"]
    assert {p: (vault / p).read_bytes() for p in untouched} == untouched
    assert "drills" not in (vault / "attn" / "suggested.md").read_text(encoding="utf-8")


def test_review_mastery_counts_suggested_drills_as_a_drill_result_does(service, vault):
    """The value a review writes equals the one a drill result would write (one definition)."""
    suggested = NEW_NOTE.replace("自己写的测试正文。", "F.scaled_dot_product_attention(q, k, v) 缩放点积")
    (vault / "attn" / "suggested.md").write_text(suggested, encoding="utf-8")
    service.store.record_drill_attempt("sdpa", "pass", attempted_at=T0)
    with_suggestion = service.record_review("attn/suggested.md", "good").mastery
    plain = service.record_review("attn/scale.md", "good").mastery
    assert with_suggestion > plain, "the passed drill that trains it counts"
    assert service.refresh_mastery("sdpa") == [], "the review already wrote what a drill result would"


def test_counts_follow_anki_new_learning_review(service, ctx):
    """A new note's first Good moves it from new to a waiting learning step: remaining drops."""
    from studyapp.cards import queue_counts

    def counts():
        return queue_counts(service.queue(service.note_cards(service.vault.load().notes)), ctx.now())

    start = counts()
    assert (start.new, start.learning, start.review, start.waiting) == (1, 0, 1, 0)
    service.record_review("attn/scale.md", "good")
    after = counts()
    assert (after.new, after.learning, after.review, after.waiting) == (0, 0, 1, 1)
    assert after.remaining == start.remaining - 1
    ctx.frozen_now = T0 + timedelta(minutes=11)  # its 10-minute step has come
    due = counts()
    assert (due.new, due.learning, due.review, due.waiting) == (0, 1, 1, 0)


def test_cli_due_prints_the_same_counts(vault, tmp_path, capsys):
    import json

    common = ["--vault", str(vault), "--data-dir", str(tmp_path / "d"), "--now", T0.isoformat()]
    assert main(["rate", "attn/scale.md", "--rating", "good", *common]) == 0
    capsys.readouterr()
    assert main(["due", *common]) == 0
    first = capsys.readouterr().out.splitlines()[0]
    assert first.startswith("0 new · 0 learning · 1 review (+1 learning step(s) due later in the session)")
    assert main(["due", "--json", *common]) == 0
    assert [i["queue"] for i in json.loads(capsys.readouterr().out)] == ["review", "learning"]


def test_good_and_easy_never_show_the_same_interval():
    """FSRS orders hard < good < easy only for cards in review; a graduating learning step gave
    Good and Easy both 1 day. Easy now gets at least a day more than Good, as in Anki."""
    from fsrs import Rating

    from studyapp.schedule import format_interval, preview, review

    checked = 0
    for fuzz in (False, True):
        scheduler = build_scheduler(Settings(), fuzz=fuzz)
        for first in (Rating.Again, Rating.Hard, Rating.Good):
            for second in (Rating.Again, Rating.Hard, Rating.Good):
                row, now = new_card(1, T0), T0
                for rating in (first, second):
                    row = review(scheduler, row, rating, now)
                    now = row.due
                spans = preview(scheduler, row, now)
                assert format_interval(spans["easy"]) != format_interval(spans["good"])
                assert spans["easy"] > spans["good"]
                good_days = (review(build_scheduler(Settings(), fuzz=False), row, Rating.Good, now).due - now).days
                easy = review(scheduler, row, Rating.Easy, now)
                assert (easy.due - now).days > good_days
                checked += 1
    assert checked == 18


def test_interval_labels_differ_when_the_intervals_do():
    from studyapp.schedule import interval_labels

    spans = {"again": timedelta(minutes=10), "hard": timedelta(days=30),
             "good": timedelta(days=33), "easy": timedelta(days=34)}
    labels = interval_labels(spans)
    assert labels["good"] != labels["easy"] and labels["good"] == "33d" and labels["easy"] == "34d"
    assert labels["again"] == "10m"


def test_rating_a_suspended_new_note_keeps_it_suspended_and_undo_restores_the_row(service):
    service.set_suspended("attn/scale.md", True)
    cards = rows(service, "cards")
    service.record_review("attn/scale.md", "good")
    assert _item(service, "attn/scale.md").card.suspended
    (review,) = service.store.reviews()
    assert review.state_before is None  # still its first review, as a new note
    service.undo_last()
    assert rows(service, "cards") == cards
