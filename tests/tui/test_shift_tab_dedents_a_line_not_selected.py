"""In a drill's code editor, two lines selected the usual way (from the first one's start,
shift+down twice) end at column 0 of the line below them. shift+tab dedents the two selected
lines and that third line too, which shows no selection: a `return` meant to stay inside the
function moves out of it (at module level: "'return' outside function"), and the learner has
to find which line moved."""

from __future__ import annotations

from textual.app import App

from studyapp.tui.widgets.code_editor import CodeEditor

CODE = "def f(x):\n    if x:\n        y = 1\n        z = 2\n    return x\n"


async def test_shift_tab_leaves_the_line_below_a_whole_line_selection_alone():
    class One(App):
        def compose(self):
            yield CodeEditor.code_editor(CODE, language="python", soft_wrap=False)

    app = One()
    async with app.run_test() as pilot:
        editor = app.query_one(CodeEditor)
        editor.focus()
        editor.move_cursor((2, 0))
        await pilot.press("shift+down", "shift+down")  # `y = 1` and `z = 2`, the whole lines
        assert editor.selected_text == "        y = 1\n        z = 2\n"
        await pilot.press("shift+tab")
        assert editor.text == "def f(x):\n    if x:\n    y = 1\n    z = 2\n    return x\n", editor.text
