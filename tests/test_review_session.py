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


# -- a rating undone by another process (`studyapp undo`, another app) ----------------------


@pytest.fixture
def facade(ctx):
    from studyapp.facade import StudyFacade

    study = StudyFacade(ctx)
    study.load()
    study.begin_review()
    yield study
    study.close()


def undo_in_another_process(ctx) -> str:
    """What `studyapp undo` does in another shell: the newest review goes; its note's path."""
    from studyapp.drill_reviews import undo_newest_review

    with ReviewService(ctx) as other:
        done = undo_newest_review(other)
    assert done is not None and done.kind == "note"
    return done.key


def test_a_rating_undone_by_another_process_leaves_the_tally_and_the_note_is_due_again(facade, ctx):
    """The session went on counting the rating, and the note came back only in the next one."""
    first = facade.current_card().path
    facade.rate(first, int(Rating.Good))
    assert facade.progress().reviewed == 1 and first not in facade.session.order
    assert undo_in_another_process(ctx) == first
    facade.notes_changed((first,))  # the vault watcher saw the note's review keys go back
    assert facade.progress().reviewed == 0 and facade.summary().reviewed == 0
    assert first in facade.session.order
    assert facade.undone_elsewhere() == (facade.vault.notes[first].title,)
    assert facade.undone_elsewhere() == (), "said once"
    assert facade.undo() is None, "the app's own undo has nothing left of it"


def test_the_note_on_screen_stays_when_its_rating_is_undone_elsewhere(facade, ctx):
    """An "again" back on screen, its rating undone by another process: the session took the
    changed card for a review made elsewhere and dropped the note, unreviewed."""
    first = facade.current_card().path
    facade.rate(first, int(Rating.Good))
    second = facade.current_card().path
    facade.rate(second, int(Rating.Again))
    assert facade.current_card().path == second, "the again is the only note left"
    assert undo_in_another_process(ctx) == second
    facade.notes_changed((second,))
    card = facade.current_card()
    assert card is not None and card.path == second
    assert facade.summary().by_rating == {int(Rating.Good): 1}


def test_a_rating_undone_elsewhere_is_found_by_the_poll_without_a_file_event(facade, ctx):
    """The watcher may see the note change before the other process commits its undo (or not
    at all): the few-second poll of the review log finds it too."""
    first = facade.current_card().path
    facade.rate(first, int(Rating.Good))
    undo_in_another_process(ctx)
    taken = facade.take_other_devices_reviews()  # another process wrote: screens draw anew
    assert taken is not None and taken.reviews == 0, "no other device wrote: nothing to replay"
    assert facade.progress().reviewed == 0 and first in facade.session.order
    assert facade.undone_elsewhere() == (facade.vault.notes[first].title,)


def test_a_rating_undone_on_another_device_leaves_the_session_once_its_log_is_synced(facade, ctx):
    """Another device's undo of a review made here, in its log file a sync tool copied in."""
    import os
    import time
    from datetime import timedelta

    from studyapp.history.eventlog import EventLog, log_dir
    from studyapp.history.events import EventKind, new_event

    first = facade.current_card().path
    facade.rate(first, int(Rating.Good))
    (event_id,) = [row.event_id for row in facade.service.store.reviews()]
    a_while_ago = time.time_ns() - 60 * 10**9  # past `sync.SETTLE_SECONDS`: the replay corrects it
    os.utime(facade.note_file(first), ns=(a_while_ago, a_while_ago))
    laptop = EventLog(log_dir(ctx.paths, ctx.settings), "laptop")
    laptop.append(new_event(EventKind.UNDO, T0 + timedelta(minutes=1), "laptop", first, review=event_id))
    taken = facade.take_other_devices_reviews()
    assert taken is not None and facade.service.store.reviews() == []
    assert facade.progress().reviewed == 0 and first in facade.session.order
    assert facade.undone_elsewhere() == (facade.vault.notes[first].title,)
