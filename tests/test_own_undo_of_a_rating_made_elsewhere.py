"""Found driving the app in tmux: a note on screen in the review is rated with `studyapp rate`
in another shell (it leaves the session, "changed outside the app and left this session"); the
learner then presses `u` in the app, which takes back that newest review of this device and
says "Undid the rating of …". A few seconds later the app also says "The rating of … was undone
in another studyapp: the note is due again in this session": the undo was made here, by the
learner, not in another studyapp. `ReviewSession.undo` leaves the note in `left_reviewed`, so
the next poll (`_follow_undos`) takes the app's own undo for one made elsewhere."""

from __future__ import annotations

from fsrs import Rating
from test_review_session import ctx, facade  # noqa: F401  (fixtures: two notes, a session begun)

from studyapp.reviews import ReviewService


def rate_in_another_process(ctx, path: str) -> None:  # noqa: F811
    """What `studyapp rate PATH --rating good` does in another shell."""
    with ReviewService(ctx) as other:
        other.load()
        other.record_review(path, Rating.Good)


def test_the_apps_own_undo_of_a_rating_made_elsewhere_is_not_said_to_be_undone_elsewhere(facade, ctx):  # noqa: F811
    shown = facade.current_card().path
    rate_in_another_process(ctx, shown)
    facade.notes_changed((shown,))  # the vault watcher: the note was rated elsewhere, it leaves
    assert shown not in facade.session.order, "rated elsewhere: it left the session"
    assert facade.undone_elsewhere() == ()

    undone = facade.undo()  # `u` in the app: the newest review of this device goes
    assert undone is not None and undone.path == shown
    facade.notes_changed((shown,))  # the watcher sees the app's own write
    facade.take_other_devices_reviews()  # the few-second poll

    assert facade.undone_elsewhere() == (), (
        "the app's own undo was announced as one made in another studyapp")
