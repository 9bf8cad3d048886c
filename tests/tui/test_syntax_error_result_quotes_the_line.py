"""A syntax error's result names the line and quotes it ("line 29:     s = Q @ ..."), so the
learner sees what is wrong without counting lines. An error found while compiling rather than
parsing ('return' outside function, 'break' outside loop, a name both nonlocal and global...)
came with no text: the result read "line 29:" and then nothing."""

from __future__ import annotations

from textual.widgets import Static

from studyapp.tui.screens.drill import DrillScreen

from .conftest import real_app, settle, wait_for


async def test_return_outside_a_function_quotes_the_line(ctx, shared_grader):
    app = real_app(ctx, shared_grader)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        app.action_open_drill("sdpa")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, DrillScreen)
        editor = screen.query_one("#code")
        editor.move_cursor((len(editor.text.splitlines()), 0))
        editor.insert("return Q\n")  # typed at the start of a line below the function: a beginner's slip
        await pilot.press("ctrl+r")
        await wait_for(pilot, lambda: not screen.grading, seconds=60)
        summary = str(screen.query_one("#verdict-summary", Static).render())
        assert "syntax error" in summary and "'return' outside function" in summary, summary
        detail = str(screen.query_one("#detail", Static).render())
        first = detail.splitlines()[0]
        assert first.startswith("line ") and "return Q" in first, (
            f"the result names the line but does not quote it: {detail!r}")
