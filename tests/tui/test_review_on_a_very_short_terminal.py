"""The review on a terminal 10 rows high or fewer: the header, the session counts, the drills
line and the answer's border took the rows, and the revealed answer got two of ten (none of
eight). There the review keeps the question, the answer, the rating buttons and the footer."""

from __future__ import annotations

import pytest

from studyapp.tui.screens.review import ReviewScreen
from studyapp.tui.widgets.answer import Answer

from .conftest import app_with_grader, screen_lines, settle
from .sample_vault import write_vault
from .test_tui_drills import StubGrader

FIRST_ANSWER_WORDS = "点积的方差随"
"""The start of the first note's answer (the session begins with it)."""


async def revealed(app, pilot) -> ReviewScreen:
    """The review opened and the first note's answer shown, the toasts cleared."""
    await settle(pilot)
    await pilot.press("r")
    await settle(pilot)
    await pilot.press("space")
    await settle(pilot)
    app.clear_notifications()
    await settle(pilot)
    screen = app.screen
    assert isinstance(screen, ReviewScreen) and screen.revealed
    return screen


@pytest.mark.parametrize("size", [(80, 10), (80, 8), (40, 10), (40, 8)], ids=lambda s: f"{s[0]}x{s[1]}")
async def test_the_revealed_answer_gets_most_of_a_very_short_terminal(ctx, size):
    write_vault(ctx.paths.vault_dir)
    app = app_with_grader(ctx, StubGrader())
    async with app.run_test(size=size) as pilot:
        screen = await revealed(app, pilot)
        lines = screen_lines(app)
        answer = screen.query_one("#answer", Answer)
        shown = screen_lines(app, answer.content_region)
        assert any(FIRST_ANSWER_WORDS in line for line in shown), lines
        assert answer.content_region.height >= size[1] // 2, lines  # the most of the rows, not two
        assert any("为什么注意力" in line for line in lines), lines  # the question stays
        assert any("1 Again" in line for line in lines[:-1]), lines  # and the buttons (above the footer)
