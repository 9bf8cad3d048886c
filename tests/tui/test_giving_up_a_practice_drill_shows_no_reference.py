"""Giving up a drill that is not due (practice, after its review today) in the app: the question
says "Give up this drill? Its reference solution is shown and the drill is not due, so nothing is
rated.", the learner answers y, and nothing is shown. The give-up is recorded (the log gets its
`drill_giveup` line), but the reference sits in the Result box, which the screen shows only
once a run has a verdict or a try proposes a rating: neither is the case here, so the box
stays hidden and F6 never reaches it. The CLI's `studyapp giveup` prints the reference."""

from __future__ import annotations

from studyapp.tui.screens.drill import DrillScreen

from .conftest import app_with_grader, screen_lines, settle
from .sample_vault import write_vault
from .test_tui_drills import StubGrader
from .test_tui_side_by_side import other_shell

SCALING = "注意力/缩放因子.md"
"""Declares `drills: [sdpa]`; reviewed here first, so sdpa is introduced, then rated."""
REFERENCE_LINE = "Scaled dot-product attention, written out"
"""The first line of kernels/sdpa/reference.py."""


async def test_giving_up_a_drill_that_is_not_due_shows_its_reference(ctx):
    write_vault(ctx.paths.vault_dir)
    other_shell(ctx, "rate", SCALING, "--rating", "good")
    other_shell(ctx, "rate-drill", "sdpa", "--rating", "good")  # reviewed: not due again today
    app = app_with_grader(ctx, StubGrader())
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        app.action_open_drill("sdpa")
        await settle(pilot)
        drill = app.screen
        assert isinstance(drill, DrillScreen)
        assert "not due, so nothing is rated" in app.study.drill_give_up_question("sdpa")
        await pilot.press("f3")
        await settle(pilot)
        await pilot.press("y")  # "Its reference solution is shown"
        await settle(pilot)
        assert app.screen is drill
        assert app.study.drill_reference("sdpa") is not None  # the give-up counted: it may be shown
        shown = "\n".join(screen_lines(app))
        assert drill.query_one("#result-box").display, "the Result box, holding the reference, stays hidden"
        assert REFERENCE_LINE in shown, f"the reference is not on the screen:\n{shown}"
