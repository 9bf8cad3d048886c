"""From the third TUI hunt (tmux): in a drill's code editor, shift+tab (the dedent key of every
code editor) moves the focus out of the editor, silently (the editor keeps its look, the cursor
just stops). The code typed on then runs the screen's single-letter keys: `h` records a hint
counted in the try's rating (Good becomes Hard), `g` asks to give up, `e` opens $EDITOR, `d`/`n`/`t`
leave the drill. README: "While the drill editor ... has the focus, keys are text"; a key meant
for the code must stay in the editor."""

from __future__ import annotations

from textual.widgets import TextArea

from studyapp.tui.screens.drill import DrillScreen
from studyapp.tui.screens.review import ReviewScreen

from .conftest import app_with_grader, settle
from .test_tui_drill_reviews import NOTE, PASS, ScriptedGrader


async def test_shift_tab_in_the_code_editor_then_typing_records_no_hint(ctx):
    (ctx.paths.vault_dir / "scale.md").write_text(NOTE, encoding="utf-8")
    app = app_with_grader(ctx, ScriptedGrader(PASS))
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("r")
        await settle(pilot)
        review = app.screen
        assert isinstance(review, ReviewScreen)
        await pilot.press("space", "3")
        await settle(pilot)
        assert review.due_drill is not None and review.due_drill.id == "sdpa"
        await pilot.press("enter")  # the due drill: a try starts, the editor has the focus
        await settle(pilot)
        drill = app.screen
        assert isinstance(drill, DrillScreen) and isinstance(app.focused, TextArea)

        await pilot.press("tab", "x", "shift+tab", "h")  # indent, a letter, dedent, type on
        await settle(pilot)
        assert not app.study.drill_hints_shown("sdpa"), (
            "a letter typed after shift+tab in the editor asked for a hint, counted in the rating")
        assert drill.is_current, "a letter typed after shift+tab left the drill"


async def test_shift_tab_dedents_the_lines_under_the_cursor():
    from textual.app import App

    from studyapp.tui.widgets.code_editor import CodeEditor

    class One(App):
        def compose(self):
            yield CodeEditor.code_editor("def f():\n        x = 1\n  y = 2\n", language=None)

    app = One()
    async with app.run_test() as pilot:
        editor = app.query_one(CodeEditor)
        editor.focus()
        editor.move_cursor((1, 8))
        await pilot.press("shift+tab")
        assert editor.text == "def f():\n    x = 1\n  y = 2\n"
        editor.select_line(2)
        await pilot.press("shift+tab")
        assert editor.text == "def f():\n    x = 1\ny = 2\n" and app.focused is editor
