"""The drill's editor: Textual's code editor that keeps the line being edited in view when it
is resized (the results pane opening under it, a smaller terminal)."""

from __future__ import annotations

from textual.widgets import TextArea


class CodeEditor(TextArea):
    """Build it with `CodeEditor.code_editor(text, ...)`, as a `TextArea`."""

    def on_resize(self) -> None:
        # after TextArea's own resize handler has re-wrapped the text for the new size
        self.call_next(self.scroll_cursor_visible, animate=False)
