"""The review on a terminal under 12 rows (703dc66, `ReviewScreen` "-tiny"): it keeps the
question, the answer, the rating buttons and the footer, so that the revealed answer gets most of
the rows. Two ways the answer or the buttons still lose them."""

from __future__ import annotations

import pytest

from studyapp.tui.widgets.answer import Answer

from .conftest import app_with_grader, screen_lines
from .sample_vault import write_vault
from .test_review_on_a_very_short_terminal import revealed
from .test_tui_drills import StubGrader

QUESTION = ("Why does scaled dot-product attention divide the scores by the square root of d_k, "
            "and what happens to the softmax and its gradients when the keys' dimension grows large?")
"""A note titled by its interview question, as this vault's notes are (`sample_vault`)."""
ANSWER = "The variance of q·k grows linearly with d_k"


@pytest.mark.parametrize("size", [(80, 8), (40, 10), (40, 8)], ids=lambda s: f"{s[0]}x{s[1]}")
async def test_a_long_question_leaves_the_revealed_answer_most_of_a_tiny_terminal(ctx, size):
    """The question is `height: auto` at every size: a question of 170 characters wraps to six
    rows of 40 columns, and on 8 rows the answer gets one (the rating buttons none), on 10 two:
    what "-tiny" was made to end (the answer got two rows of ten)."""
    (ctx.paths.vault_dir / "scaling.md").write_text(
        f"---\nreview_count: 0\nnext_review: 2026-11-20\n---\n# {QUESTION}\n\n{ANSWER}, so the softmax saturates.\n",
        encoding="utf-8")
    app = app_with_grader(ctx, StubGrader())
    async with app.run_test(size=size) as pilot:
        screen = await revealed(app, pilot)
        lines = screen_lines(app)
        answer = screen.query_one("#answer", Answer)
        assert answer.content_region.height >= size[1] // 2, (
            f"the answer got {answer.content_region.height} of {size[1]} rows: {lines}")


@pytest.mark.parametrize("size", [(40, 10), (40, 8)], ids=lambda s: f"{s[0]}x{s[1]}")
async def test_every_rating_button_is_in_view_on_a_narrow_tiny_terminal(ctx, size):
    """At 40 columns the four buttons (each at least 12 cells wide, with a margin) need 56: the
    row shows "1 Again" alone, and Hard, Good and Easy with their intervals are off the screen
    (703dc66's test of 40x10 and 40x8 looks for "1 Again" only)."""
    write_vault(ctx.paths.vault_dir)
    app = app_with_grader(ctx, StubGrader())
    async with app.run_test(size=size) as pilot:
        await revealed(app, pilot)
        lines = screen_lines(app)
        above_footer = "\n".join(lines[:-1])
        missing = [label for label in ("1 Again", "2 Hard", "3 Good", "4 Easy") if label not in above_footer]
        assert not missing, f"rating buttons out of view: {missing}; the screen: {lines}"
