"""The Drills list after another shell changed a drill's review (found in tmux: `studyapp
rate-drill sdpa` and `studyapp undo` beside the app): a note changed elsewhere shows at once,
but a drill's review touches no note, and the list kept the old "Next due" until the learner
left the screen and came back."""

from __future__ import annotations

from textual.widgets import DataTable

from .conftest import app_with_grader, settle, wait_for
from .test_tui_drill_reviews import PASS, ScriptedGrader
from .test_tui_side_by_side import other_shell


def _next_due(app) -> str:
    return str(app.screen.query_one("#drill-table", DataTable).get_row("sdpa")[2])


async def test_the_drills_list_shows_a_drill_rated_in_another_shell(ctx):
    app = app_with_grader(ctx, ScriptedGrader(PASS))
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("d")
        await settle(pilot)
        app.action_open_drill("sdpa")
        await settle(pilot)
        await pilot.press("ctrl+r")
        await settle(pilot)
        assert app.screen.proposal is not None
        await pilot.press("escape")  # back to the list, the try waiting for its rating
        await settle(pilot)
        before = _next_due(app)

        other_shell(ctx, "rate-drill", "sdpa")
        (review,) = [p for p in app.study.drill_progress() if p.id == "sdpa"]
        rated_due = review.next_due.isoformat()
        assert rated_due not in before

        await wait_for(pilot, lambda: rated_due in _next_due(app), seconds=8)
        assert rated_due in _next_due(app), (before, _next_due(app))


async def test_the_drill_screen_drops_a_proposal_rated_in_another_shell(ctx):
    """On the drill screen itself, "Proposed rating: … Enter records it" stayed after
    `studyapp rate-drill` in another shell had rated the try (Enter then said nothing was
    recorded)."""
    from textual.widgets import Static

    app = app_with_grader(ctx, ScriptedGrader(PASS))
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("d")
        await settle(pilot)
        app.action_open_drill("sdpa")
        await settle(pilot)
        await pilot.press("ctrl+r")
        await settle(pilot)
        screen = app.screen
        proposal = screen.query_one("#drill-proposal", Static)
        assert screen.proposal is not None and proposal.display

        other_shell(ctx, "rate-drill", "sdpa")
        await wait_for(pilot, lambda: screen.proposal is None, seconds=8)

        assert screen.proposal is None and not proposal.display
