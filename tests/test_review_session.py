"""The review session and the drills service without a front end: what the CLI and the TUI
both rely on (issue 11: one core, two thin front ends)."""

from __future__ import annotations

import pytest
from fsrs import Rating
from test_reviews import LEGACY_NOTE, NEW_NOTE, T0

from studyapp import drills
from studyapp.context import build_context
from studyapp.errors import UsageError
from studyapp.live_vault import LiveVault
from studyapp.review_session import ReviewSession
from studyapp.reviews import ReviewService
from studyapp.views import UndoKind


@pytest.fixture
def ctx(tmp_path):
    root = tmp_path / "vault"
    (root / "attn").mkdir(parents=True)
    (root / "attn" / "scale.md").write_bytes(NEW_NOTE.encode())
    (root / "attn" / "mask.md").write_bytes(LEGACY_NOTE.encode())
    return build_context(vault=str(root), data_dir=str(tmp_path / "data"), now=T0)


@pytest.fixture
def session(ctx):
    with ReviewService(ctx) as service:
        vault = LiveVault(service)
        vault.load()
        session = ReviewSession(service, vault)
        session.begin(vault.items())
        yield session


def test_again_comes_back_after_the_rest_and_counts_once(session):
    first = session.next_path
    assert first is not None and len(session.order) == 2
    session.rate(first, Rating.Again, 5.0)
    assert session.order[-1] == first, "an again waits behind the notes not yet seen"
    assert session.next_path != first
    left, reviewed = session.progress()
    assert reviewed == 1 and left.remaining + left.waiting == 2
    assert session.tally().by_rating == {int(Rating.Again): 1}


def test_undo_takes_the_rating_back_and_shows_the_note_first(session):
    first = session.next_path
    assert first is not None
    session.rate(first, Rating.Good, None)
    step = session.undo()
    assert step is not None and (step.kind, step.path, step.show) == (UndoKind.RATING, first, True)
    assert session.next_path == first and session.tally().reviewed == 0
    assert session.service.store.reviews() == []


def test_a_suspension_is_undone_before_an_older_rating(session):
    rated, other = session.order
    session.rate(rated, Rating.Good, None)
    session.suspend(other)
    assert other not in session.members
    step = session.undo()
    assert step is not None and (step.kind, step.path) == (UndoKind.SUSPENSION, other)
    assert session.next_path == other
    assert len(session.service.store.reviews()) == 1, "the rating stays"


def test_starter_file_is_written_once_and_never_replaced(tmp_path):
    path, created = drills.starter_file("sdpa", tmp_path / "ws")
    assert created and path.read_text(encoding="utf-8").strip()
    path.write_text("# mine\n", encoding="utf-8")
    assert drills.starter_file("sdpa", tmp_path / "ws") == (path, False)
    assert path.read_text(encoding="utf-8") == "# mine\n"


def test_an_unknown_drill_is_one_line_naming_the_drills_there_are():
    with pytest.raises(UsageError, match="unknown drill 'foo'; choose from: .*sdpa"):
        drills.drill("foo")
    message = drills.unknown_drills_message("Scaling", ["foo"])
    assert "foo" in message and "sdpa" in message and "\n" not in message


def test_the_grader_takes_its_limits_from_the_settings_or_the_flag(ctx):
    ctx.settings.grader_timeout, ctx.settings.grader_memory_mb = 4.5, 999
    client = drills.new_grader_client(ctx.settings)
    assert (client.limits.timeout, client.limits.memory_mb) == (4.5, 999)
    assert drills.new_grader_client(ctx.settings, timeout=2.0).limits.timeout == 2.0
    with pytest.raises(UsageError, match="--timeout"):
        drills.new_grader_client(ctx.settings, timeout=0)


def test_undo_takes_back_a_drill_rated_after_the_note_first(session, ctx):
    """The app's `u` after rating a drill takes that rating back (the newest review), not
    the note's before it; the next `u` takes the note's."""
    from datetime import timedelta

    from studyapp.drill_reviews import DrillReviews

    first = session.next_path
    session.rate(first, Rating.Good, None)
    ctx.frozen_now = T0 + timedelta(minutes=5)
    DrillReviews(session.service).record("sdpa", rating=2)
    step = session.undo()
    assert step is not None and (step.kind, step.path, step.show) == (UndoKind.RATING, "sdpa", False)
    assert step.title == drills.catalog()["sdpa"].title
    assert session.service.store.drill_reviews() == [] and session.tally().reviewed == 1
    step = session.undo()
    assert step is not None and (step.path, step.show) == (first, True)
    assert session.service.store.reviews() == []


def test_a_note_moved_out_of_the_vault_and_back_returns_to_the_session(session):
    """Moved away (by a sync tool, a file manager) it leaves the session; back again, it is one
    of today's notes again, as Today and `due` count it."""
    vault_dir = session.service.ctx.paths.vault_dir
    path = "attn/scale.md"
    assert path in session.order
    aside = vault_dir.parent / "aside.md"
    (vault_dir / path).rename(aside)
    session.vault.reload_changes()
    session.keep_only(session.vault.notes)
    assert path not in session.order
    aside.rename(vault_dir / path)
    session.vault.reload_changes()
    session.keep_only(session.vault.notes)
    assert path in session.order and len(session.order) == 2
