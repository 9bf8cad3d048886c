"""Found in tmux: in the app, the learner rates one note, then suspends another (`s`), then
resumes that note from another shell (`studyapp unsuspend`). The app's Notes list follows
(1e17974), but its undo does not: `u` says "Undid the suspension of …" about a note that is no
longer suspended, changes nothing, and the rating the learner meant to take back stays. A
suspension undone elsewhere is not this app's change to take back any more."""

from __future__ import annotations

from fsrs import Rating
from test_review_session import ctx, facade  # noqa: F401  (fixtures: two notes, a session begun)

from studyapp.reviews import ReviewService
from studyapp.undo_kinds import UndoKind


def test_undo_does_not_claim_a_suspension_another_process_already_resumed(facade, ctx):  # noqa: F811
    rated = facade.current_card().path
    facade.rate(rated, int(Rating.Good))
    other = next(p for p in ("attn/scale.md", "attn/mask.md") if p != rated)
    facade.suspend(other)  # `s` in the app

    with ReviewService(ctx) as cli:  # `studyapp unsuspend OTHER` in another shell
        cli.load()
        assert cli.set_suspended(other, False)
    facade.take_other_devices_reviews()  # the app's poll: its lists follow

    undone = facade.undo()  # `u` in the app
    assert undone is not None
    assert not (undone.kind is UndoKind.SUSPENSION and undone.path == other), (
        f"'Undid the suspension of {undone.title}': it was resumed elsewhere already, nothing changed, "
        "and the rating made here was not taken back")
