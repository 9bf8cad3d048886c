"""Found in tmux: the drill screen shows a try's proposed rating, the learner has moved to the
results (F6), and `studyapp rate-drill` in another shell rates that try. The app takes the
proposal away and says "This try was rated elsewhere meanwhile" (`DrillScreen.refresh_data`),
but the footer still offers "⏎ Accept": the bindings are not refreshed on that path, so the
learner presses Enter and nothing at all happens (no rating, no message)."""

from __future__ import annotations

from .conftest import app_with_grader, settle, wait_for
from .test_tui_drill_reviews import PASS, ScriptedGrader
from .test_tui_footer import footer_keys
from .test_tui_side_by_side import other_shell


async def test_the_footer_stops_offering_accept_once_the_try_was_rated_elsewhere(ctx):
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
        assert screen.proposal is not None
        await pilot.press("f6")  # to the results, where Enter records the proposal
        await settle(pilot)
        assert "enter" in footer_keys(app), "the proposal's Enter is offered"

        other_shell(ctx, "rate-drill", "sdpa")
        await wait_for(pilot, lambda: screen.proposal is None, seconds=8)
        assert screen.proposal is None

        assert "enter" not in footer_keys(app), (
            "the footer still offers Enter (Accept) for a proposal that was taken away")
