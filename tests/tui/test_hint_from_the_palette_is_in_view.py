"""The command palette offers the drill screen's "Hint" (every action of the screen in view is
in the palette, README): run from there, the hint it shows must come into view as F2's does.
At 80x24 the hints sit under a statement taller than the task pane; from the palette the pane
stayed near its top, so the learner read "Hint 1/3 (counted in the rating)" and saw no hint."""

from __future__ import annotations

import pytest
from textual.geometry import Region

from .conftest import app_with_grader, settle
from .test_tui_drills import StubGrader


@pytest.mark.parametrize("drill", ["mha", "rope"])
async def test_a_hint_run_from_the_palette_is_in_view(ctx, drill):
    app = app_with_grader(ctx, StubGrader())
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        app.action_open_drill(drill)
        await settle(pilot)
        screen = app.screen
        await pilot.press("ctrl+p")
        await settle(pilot)
        await pilot.press(*"hint")
        await settle(pilot)
        await pilot.press("enter")
        await settle(pilot)
        assert app.screen is screen
        hints = screen.query_one("#drill-hints")
        assert hints.display, "the palette's Hint showed no hint"
        box = screen.query_one("#statement-box")
        visible = box.content_region.intersection(hints.region)
        assert visible.height >= 1, "the hint asked for in the palette is out of view"
        in_view = [strip.text.strip() for strip in hints.render_lines(
            Region(0, visible.y - hints.region.y, hints.size.width, visible.height))]
        assert any(line.startswith("Hint 1/") for line in in_view), in_view
