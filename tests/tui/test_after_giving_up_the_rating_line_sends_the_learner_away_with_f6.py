"""After a confirmed give-up the Result box has the focus (README: "after a confirmed give-up the
results have it already"), so Enter records the proposed Again at once. The line under the
proposal says otherwise: "F6 (to the results), then Enter records it". F6 there moves the focus
away from the results, to the task. The give-up's own redraw says "Enter records it", but the
drill screen is redrawn again when the question closes (it is shown again), while the focus is
still on its way to the results, and that redraw puts the F6 back."""

from __future__ import annotations

from studyapp.tui.screens.drill import DrillScreen

from .conftest import app_with_grader, screen_lines, settle
from .test_tui_drill_reviews import NOTE, PASS, ScriptedGrader


async def test_the_rating_line_after_a_give_up_does_not_ask_for_f6(ctx):
    (ctx.paths.vault_dir / "scale.md").write_text(NOTE, encoding="utf-8")
    app = app_with_grader(ctx, ScriptedGrader(PASS))
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("r")
        await settle(pilot)
        await pilot.press("space", "3")  # the note; its drill is offered next
        await settle(pilot)
        await pilot.press("enter")
        await settle(pilot)
        drill = app.screen
        assert isinstance(drill, DrillScreen)
        await pilot.press("f3")
        await settle(pilot)
        await pilot.press("y")
        await settle(pilot)
        assert drill.proposal is not None
        assert app.focused is drill.query_one("#result-box")  # Enter records it now
        shown = "\n".join(screen_lines(app))
        assert "Enter records it" in shown
        assert "F6 (to the results)" not in shown, f"the line asks for F6 the results do not need:\n{shown}"
