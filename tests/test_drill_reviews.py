"""Drills as review items: the rating rule, the queue of due drills, tries (hints, give-up,
reference), recording through FSRS, and the log replaying it all."""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from fsrs import Rating, State
from vault_fixtures import SDPA_NOTE

from studyapp.context import build_context
from studyapp.drill_rating import (
    DrillTry,
    build_try,
    drill_scheduler,
    due_drills,
    fast_limit,
    propose_rating,
    weekly_retention,
)
from studyapp.drill_reviews import DrillReviews, NoHintsLeft, TryAlreadyRated, new_drill_card
from studyapp.errors import UsageError
from studyapp.reviews import ReviewService
from studyapp.schedule import review as fsrs_review
from studyapp.store import CardRow, DrillReviewRow

T0 = datetime(2026, 5, 4, 9, 0, tzinfo=timezone.utc)


def a_try(runs=(True,), hints=0, gave_up=False, minutes=10.0) -> DrillTry:
    return DrillTry("sdpa", T0, tuple(runs), hints, gave_up, T0 + timedelta(minutes=minutes))


# -- the rating rule -----------------------------------------------------------------------


def test_first_run_pass_without_hints_is_good():
    proposal = propose_rating(a_try())
    assert proposal is not None and proposal.rating is Rating.Good


def test_a_failed_run_before_the_pass_makes_it_hard():
    proposal = propose_rating(a_try(runs=(False, True)))
    assert proposal is not None and proposal.rating is Rating.Hard
    assert "1 failed run" in proposal.reason


def test_a_hint_makes_a_first_run_pass_hard():
    proposal = propose_rating(a_try(hints=1))
    assert proposal is not None and proposal.rating is Rating.Hard and "1 hint" in proposal.reason


def test_giving_up_is_again_even_after_runs_and_hints():
    proposal = propose_rating(a_try(runs=(False,), hints=3, gave_up=True))
    assert proposal is not None and proposal.rating is Rating.Again


def test_a_try_still_going_proposes_nothing():
    going = DrillTry("sdpa", T0, (False,), 1, False, None)
    assert propose_rating(going) is None


def test_easy_needs_a_clean_pass_under_half_the_learners_own_median():
    history = [20 * 60.0, 30 * 60.0, 40 * 60.0]  # median 30 minutes
    assert fast_limit(history) == 15 * 60
    fast = propose_rating(a_try(minutes=14), history)
    slow = propose_rating(a_try(minutes=16), history)
    assert fast is not None and fast.rating is Rating.Easy
    assert slow is not None and slow.rating is Rating.Good
    helped = propose_rating(a_try(minutes=1, hints=1), history)
    assert helped is not None and helped.rating is Rating.Hard  # fast but helped: still Hard


def test_without_enough_history_nothing_is_fast():
    assert fast_limit([600.0]) is None
    proposal = propose_rating(a_try(minutes=0.5), [600.0])
    assert proposal is not None and proposal.rating is Rating.Good


def test_build_try_stops_at_the_first_pass_and_counts_only_hints_before_the_end():
    at = [T0 + timedelta(minutes=m) for m in range(6)]
    attempt = build_try("sdpa", at[0], [(at[1], False), (at[3], True), (at[5], False)],
                        hints=[at[2], at[4]], gave_up_at=None)
    assert attempt.runs == (False, True) and attempt.hints == 1 and attempt.ended_at == at[3]
    assert attempt.seconds == 180
    # a give-up before any pass ends the try there; later runs do not count
    quit_try = build_try("sdpa", at[0], [(at[1], False), (at[4], True)], [], gave_up_at=at[2])
    assert quit_try.gave_up and quit_try.runs == (False,) and quit_try.ended_at == at[2]


def test_due_drills_are_due_ones_first_then_new_ones_within_the_limit():
    order = [("a", "A"), ("b", "B"), ("c", "C"), ("d", "D")]
    late = new_drill_card(T0 - timedelta(days=3))
    soon = new_drill_card(T0 - timedelta(days=1))
    future = new_drill_card(T0 + timedelta(days=2))
    cards = {"b": soon, "c": late, "d": future}
    due = due_drills(order, cards, T0, eligible_new={"a"}, new_left=1)
    assert [(d.id, d.is_new) for d in due] == [("c", False), ("b", False), ("a", True)]
    assert [d.id for d in due_drills(order, cards, T0, {"a"}, new_left=0)] == ["c", "b"]


def test_drills_never_use_learning_steps():
    from studyapp.config import Settings
    from studyapp.schedule import build_scheduler

    scheduler = drill_scheduler(build_scheduler(Settings(), fuzz=False))
    after = fsrs_review(scheduler, new_drill_card(T0), Rating.Again, T0)
    assert after.state == State.Review and after.due - T0 >= timedelta(days=1)


def test_weekly_retention_counts_graduated_drill_reviews():
    def review(at, state_before, rating):
        return DrillReviewRow(0, "sdpa", rating, at, State.Review, at + timedelta(days=1),
                              state_before=state_before)

    rows = [review(T0, State.Review, 3), review(T0 + timedelta(hours=1), State.Review, 1),
            review(T0, None, 1)]
    ((_, share),) = weekly_retention(rows, T0 - timedelta(days=1))
    assert share == 0.5


# -- with a database, a log and a workspace ------------------------------------------------


@dataclass
class FakeDrill:
    """What `DrillReviews` reads of a catalog entry."""

    title: str
    folder: Path
    hints: tuple[str, ...] = ("the idea", "the API", "the code")
    reference: bool = True
    tags: tuple[str, ...] = field(default_factory=tuple)

    @property
    def starter_path(self) -> Path:
        return self.folder / "starter.py"

    @property
    def reference_path(self) -> Path | None:
        return self.folder / "reference.py" if self.reference else None


NOTE = SDPA_NOTE


@pytest.fixture
def ctx(tmp_path):
    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / "scale.md").write_text(NOTE, encoding="utf-8")
    return build_context(vault=str(vault), data_dir=str(tmp_path / "data"), now=T0, seed=False)


@pytest.fixture
def catalog(tmp_path):
    drills = {}
    for drill in ("sdpa", "mha"):
        folder = tmp_path / "kernels" / drill
        folder.mkdir(parents=True)
        (folder / "starter.py").write_text(f"def {drill}():\n    raise NotImplementedError\n")
        (folder / "reference.py").write_text(f"def {drill}():\n    return 42  # reference\n")
        drills[drill] = FakeDrill(drill.upper(), folder, reference=drill == "sdpa")
    return drills


@pytest.fixture
def service(ctx):
    with ReviewService(ctx) as s:
        s.load()
        yield s


def run(service, drill: str, passed: bool) -> None:
    service.record_drill_result({"drill": drill, "status": "pass" if passed else "fail",
                                 "summary": "", "file": "x.py", "seconds": 0.1}, notes=[])


def without_ids(reviews) -> list[DrillReviewRow]:
    """The reviews as a rebuild must give them back (a rebuild renumbers the rows)."""
    return [replace(review, id=0) for review in reviews]


def delete_database(ctx) -> None:
    """What a user may do at any time: the database is a cache of the log."""
    ctx.paths.database_file.unlink()
    for suffix in ("-wal", "-shm"):
        Path(f"{ctx.paths.database_file}{suffix}").unlink(missing_ok=True)


def at(ctx, minutes: float) -> None:
    ctx.frozen_now = T0 + timedelta(minutes=minutes)


def test_a_drill_is_introduced_once_a_paired_note_is_reviewed(service, ctx, catalog):
    drills = DrillReviews(service, catalog)
    notes = service.load().notes
    assert drills.due(notes) == []
    service.record_review("scale.md", "good")
    assert [(d.id, d.is_new) for d in drills.due(notes)] == [("sdpa", True)]
    ctx.settings.new_drills_per_day = 0
    assert drills.due(notes) == []


def test_a_due_drill_end_to_end_hint_pass_hard_and_fsrs_moves_it(service, ctx, catalog):
    drills = DrillReviews(service, catalog)
    workspace = ctx.paths.workspace_dir / "sdpa.py"
    path, backup = drills.begin("sdpa")
    assert path == workspace and backup is None
    assert workspace.read_text() == (catalog["sdpa"].folder / "starter.py").read_text()
    assert drills.reference("sdpa") is None  # not before a pass or a give-up
    at(ctx, 3)
    run(service, "sdpa", passed=False)
    at(ctx, 4)
    hint = drills.hint("sdpa")
    assert (hint.number, hint.of, hint.text) == (1, 3, "the idea")
    at(ctx, 9)
    run(service, "sdpa", passed=True)
    proposal = drills.proposal("sdpa")
    assert proposal is not None and proposal.rating is Rating.Hard
    assert "reference" in drills.reference("sdpa")
    result = drills.record("sdpa")
    (row,) = service.store.drill_reviews("sdpa")
    assert (row.rating, row.proposed, row.hints, row.runs, row.failed_runs) == (2, 2, 1, 2, 1)
    assert row.duration_ms == 9 * 60 * 1000
    expected = fsrs_review(drills.scheduler, new_drill_card(ctx.now()), Rating.Hard, ctx.now())
    assert result.due == expected.due == service.store.drill_card("sdpa").due
    assert drills.current_try("sdpa") is None  # the review closed the try


def test_a_drill_coming_back_due_gets_a_fresh_starter_and_the_learners_file_is_kept(
        service, ctx, catalog):
    drills = DrillReviews(service, catalog)
    drills.begin("sdpa")
    workspace = ctx.paths.workspace_dir / "sdpa.py"
    workspace.write_text("def sdpa():\n    return 42  # mine\n")
    run(service, "sdpa", passed=True)
    first = drills.record("sdpa")
    assert first.rating == Rating.Good
    ctx.frozen_now = first.due + timedelta(hours=1)
    path, backup = drills.begin("sdpa")
    assert path.read_text() == (catalog["sdpa"].folder / "starter.py").read_text()
    assert backup is not None and backup.read_text().endswith("# mine\n")
    again, _ = drills.begin("sdpa")  # reopening during the try keeps the learner's work
    assert again == path


def test_a_new_drills_first_review_starts_from_the_starter_not_old_practice(service, ctx, catalog):
    """Practised before it was due (or in another vault's workspace), a new drill's first
    review opened on that file: "write it from memory" over a solution already there, and its
    first run passed for Good. The practice file is kept as a backup."""
    drills = DrillReviews(service, catalog)
    workspace = ctx.paths.workspace_dir / "sdpa.py"
    workspace.parent.mkdir(parents=True, exist_ok=True)
    workspace.write_text("def sdpa():\n    return 42  # practised last week\n")
    path, backup = drills.begin("sdpa")
    assert path.read_text() == (catalog["sdpa"].folder / "starter.py").read_text()
    assert backup is not None and backup.read_text().endswith("# practised last week\n")


def test_the_hint_ladder_ends_and_give_up_shows_the_reference_and_proposes_again(
        service, ctx, catalog):
    drills = DrillReviews(service, catalog)
    drills.begin("sdpa")
    assert [drills.hint("sdpa").number for _ in range(3)] == [1, 2, 3]
    with pytest.raises(NoHintsLeft):
        drills.hint("sdpa")
    assert [h.text for h in drills.hints_shown("sdpa")] == ["the idea", "the API", "the code"]
    assert "reference" in drills.give_up("sdpa")
    proposal = drills.proposal("sdpa")
    assert proposal is not None and proposal.rating is Rating.Again
    result = drills.record("sdpa", rating=2)  # the learner overrides
    (row,) = service.store.drill_reviews("sdpa")
    assert (row.rating, row.proposed, row.gave_up) == (2, 1, 1) and result.rating == 2


def test_nothing_to_rate_without_a_finished_try_unless_a_rating_is_given(service, catalog):
    drills = DrillReviews(service, catalog)
    drills.begin("sdpa")
    with pytest.raises(UsageError):
        drills.record("sdpa")
    assert drills.record("sdpa", rating=3).rating == 3


def test_a_drill_without_a_reference_says_so(service, catalog):
    drills = DrillReviews(service, catalog)
    drills.begin("mha")
    with pytest.raises(LookupError, match="no reference"):
        drills.give_up("mha")


def test_reset_restores_the_starter_and_backs_up_the_learners_file(service, ctx, catalog):
    drills = DrillReviews(service, catalog)
    workspace = ctx.paths.workspace_dir / "sdpa.py"
    workspace.parent.mkdir(parents=True)
    workspace.write_text("# my work\n")
    backup = drills.reset("sdpa")
    assert workspace.read_text().startswith("def sdpa")
    assert backup is not None and backup.read_text() == "# my work\n"


def test_drill_reviews_replay_from_the_log_into_a_new_database(service, ctx, catalog, tmp_path):
    drills = DrillReviews(service, catalog)
    drills.begin("sdpa")
    at(ctx, 2)
    drills.hint("sdpa")
    at(ctx, 5)
    run(service, "sdpa", passed=True)
    drills.record("sdpa")
    before_card = service.store.drill_card("sdpa")
    before_rows = without_ids(service.store.drill_reviews())
    service.close()
    delete_database(ctx)
    with ReviewService(ctx) as fresh:
        assert fresh.store.drill_card("sdpa") == before_card
        assert without_ids(fresh.store.drill_reviews()) == before_rows
        assert DrillReviews(fresh, catalog).current_try("sdpa") is None
        assert [m.kind for m in fresh.store.drill_marks("sdpa")] == ["start", "hint"]


def test_progress_counts_passes_attempts_and_next_due(service, ctx, catalog):
    drills = DrillReviews(service, catalog)
    drills.begin("sdpa")
    run(service, "sdpa", passed=False)
    run(service, "sdpa", passed=True)
    result = drills.record("sdpa")
    rows = {p.id: p for p in drills.progress()}
    assert (rows["sdpa"].passes, rows["sdpa"].attempts, rows["sdpa"].status) == (1, 2, "passed")
    assert rows["sdpa"].next_due == result.due.astimezone().date() and not rows["sdpa"].due_now
    assert (rows["mha"].status, rows["mha"].next_due) == ("not started", None)


def test_a_card_row_for_a_drill_round_trips(service):
    card = CardRow(0, int(State.Review), None, 3.0, 5.0, T0, T0 - timedelta(days=3), reps=2)
    service.store.put_drill_card("x", card)
    assert service.store.drill_card("x") == card


def test_a_try_left_unrated_on_an_earlier_day_gives_way_to_a_new_one(service, ctx, catalog):
    drills = DrillReviews(service, catalog)
    drills.begin("sdpa")
    run(service, "sdpa", passed=True)
    assert drills.proposal("sdpa") is not None
    ctx.frozen_now = T0 + timedelta(days=1)
    assert drills.current_try("sdpa") is None and drills.proposal("sdpa") is None
    drills.begin("sdpa")
    attempt = drills.current_try("sdpa")
    assert attempt is not None and attempt.started_at == ctx.now() and attempt.runs == ()


def test_practice_of_a_drill_not_due_shows_the_reference_after_a_pass_or_a_give_up(
        service, ctx, catalog):
    drills = DrillReviews(service, catalog)
    drills.begin("sdpa")
    run(service, "sdpa", passed=True)
    due = drills.record("sdpa").due
    ctx.frozen_now = due - timedelta(hours=1)  # not due yet: practice, no try
    assert drills.begin("sdpa")[1] is None and drills.current_try("sdpa") is None
    run(service, "sdpa", passed=False)
    assert drills.reference("sdpa") is None
    run(service, "sdpa", passed=True)
    assert "reference" in drills.reference("sdpa")
    run(service, "sdpa", passed=False)
    assert drills.reference("sdpa") is None
    drills.give_up("sdpa")
    assert "reference" in drills.reference("sdpa") and drills.proposal("sdpa") is None


# -- undo ----------------------------------------------------------------------------------


def test_undo_reverts_the_newest_review_a_drill_after_a_note(service, ctx, catalog):
    """`undo` takes back the most recent review, of a note or a drill: a wrong key on a
    drill's rating is as easy to take back as on a note's."""
    from studyapp.drill_reviews import undo_newest_review

    drills = DrillReviews(service, catalog)
    service.record_review("scale.md", "good")
    at(ctx, 1)
    drills.begin("sdpa")
    at(ctx, 4)
    run(service, "sdpa", passed=True)
    first = drills.record("sdpa", rating=4)
    assert service.store.drill_card("sdpa") is not None and first.rating == 4
    at(ctx, 5)
    undone = undo_newest_review(service, catalog)
    assert (undone.kind, undone.key, undone.rating) == ("drill", "sdpa", "easy")
    assert service.store.drill_card("sdpa") is None  # never reviewed before: no card again
    assert service.store.drill_reviews() == []
    proposal = drills.proposal("sdpa")  # the try is open again: it can be rated anew
    assert proposal is not None and proposal.rating == Rating.Good
    assert drills.record("sdpa").rating == int(Rating.Good)
    assert len(service.store.drill_reviews()) == 1
    at(ctx, 6)
    assert undo_newest_review(service, catalog).kind == "drill"
    at(ctx, 7)
    note = undo_newest_review(service, catalog)  # then the note's, older
    assert (note.kind, note.key) == ("note", "scale.md")
    assert undo_newest_review(service, catalog) is None  # nothing left to take back


def test_an_undone_drill_review_stays_undone_after_a_rebuild(service, ctx, catalog):
    from studyapp.drill_reviews import undo_newest_review

    drills = DrillReviews(service, catalog)
    drills.begin("sdpa")
    at(ctx, 2)
    run(service, "sdpa", passed=True)
    drills.record("sdpa", rating=3)
    kept = service.store.drill_card("sdpa")
    at(ctx, 60 * 24 * 3)
    drills.begin("sdpa")
    at(ctx, 60 * 24 * 3 + 2)
    run(service, "sdpa", passed=False)
    drills.record("sdpa", rating=1)
    at(ctx, 60 * 24 * 3 + 3)
    undo_newest_review(service, catalog)
    assert service.store.drill_card("sdpa") == kept  # the card the first review made
    rows = without_ids(service.store.drill_reviews())
    service.close()
    delete_database(ctx)
    with ReviewService(ctx) as fresh:
        assert fresh.store.drill_card("sdpa") == kept
        assert without_ids(fresh.store.drill_reviews()) == rows


def test_a_new_drill_whose_try_began_keeps_its_place_in_todays_drills(tmp_path, capsys):
    """Two new drills a day: once a try of one has begun, a note reviewed later that pairs with
    a drill earlier in the catalog does not push it out of today's drills."""
    from studyapp.cli import main

    vault = tmp_path / "vault"
    vault.mkdir()
    for name, drill in (("a", "sdpa"), ("b", "causal_mask"), ("c", "safe_softmax")):
        (vault / f"{name}.md").write_text(
            f"---\nreview_count: 0\nlast_reviewed: null\nnext_review: 2026-11-01\ndrills: [{drill}]\n---\n"
            f"# {name}\n\nbody\n", encoding="utf-8")
    common = ["--vault", str(vault), "--data-dir", str(tmp_path / "data"), "--now", "2026-11-20T09:00"]

    def due_drills() -> list[str]:
        capsys.readouterr()
        assert main(["due", "--json", *common]) == 0
        return [row["id"] for row in json.loads(capsys.readouterr().out) if row.get("kind") == "drill"]

    for name in ("a", "b"):
        assert main(["rate", f"{name}.md", "--rating", "easy", *common]) == 0
    assert sorted(due_drills()) == ["causal_mask", "sdpa"]
    assert main(["start", "causal_mask", *common]) == 0
    assert main(["rate", "c.md", "--rating", "easy", *common]) == 0
    assert "causal_mask" in due_drills()


def test_a_rating_for_the_try_shown_is_not_given_to_a_newer_try_made_elsewhere(service, ctx, catalog):
    """A screen showed its try's proposal; another process rated that try and the next day gave
    up a new one. The screen's rating went to that newer try, one it never showed."""
    drills = DrillReviews(service, catalog)
    drills.begin("sdpa")
    run(service, "sdpa", passed=True)
    shown = drills.proposal("sdpa")
    assert shown is not None and shown.rating is Rating.Good
    with ReviewService(ctx) as other:  # another shell, as another process would
        elsewhere = DrillReviews(other, catalog)
        elsewhere.record("sdpa", rating=1)
        ctx.frozen_now = T0 + timedelta(days=1, hours=1)
        elsewhere.give_up("sdpa")
    with pytest.raises(TryAlreadyRated) as refused:
        drills.record("sdpa", rating=4, this_try=shown)
    assert refused.value.newer_try
    assert [row.rating for row in service.store.drill_reviews("sdpa")] == [1]
    newer = drills.proposal("sdpa")  # the newer try, shown now, is rated as it is
    assert newer is not None and newer.rating is Rating.Again
    assert drills.record("sdpa", this_try=newer).rating == 1
    assert len(service.store.drill_reviews("sdpa")) == 2


def test_a_try_rated_elsewhere_and_then_undone_there_is_still_the_try_shown(service, ctx, catalog):
    """What is right already: the try's rating undone elsewhere opens the same try again, and
    the screen's rating is for it."""
    drills = DrillReviews(service, catalog)
    drills.begin("sdpa")
    run(service, "sdpa", passed=True)
    shown = drills.proposal("sdpa")
    with ReviewService(ctx) as other:
        elsewhere = DrillReviews(other, catalog)
        elsewhere.record("sdpa", rating=1)
        with pytest.raises(TryAlreadyRated) as refused:
            drills.record("sdpa", this_try=shown)
        assert not refused.value.newer_try
        elsewhere.undo_last()
    assert drills.record("sdpa", this_try=shown).rating == int(Rating.Good)
    assert [row.rating for row in service.store.drill_reviews("sdpa")] == [int(Rating.Good)]
