"""The drill's editor: Textual's code editor that keeps the line being edited in view when it
is resized (the results pane opening under it, a smaller terminal)."""

from __future__ import annotations

from textual.binding import Binding
from textual.widgets import TextArea


class CodeEditor(TextArea):
    """Build it with `CodeEditor.code_editor(text, ...)`, as a `TextArea`.

    shift+tab dedents, as in any code editor: it moved the focus out of the editor, and the
    next letters typed became the screen's keys (`h` asked for a hint that counts)."""

    BINDINGS = [Binding("shift+tab", "dedent", "Dedent", show=False)]

    def action_dedent(self) -> None:
        """Take up to one indent's spaces (or a tab) off the start of each selected line."""
        start, end = sorted((self.selection.start, self.selection.end))
        width = self.indent_width
        for row in range(start[0], end[0] + 1):
            line = self.document.get_line(row)
            cut = 1 if line.startswith("\t") else min(width, len(line) - len(line.lstrip(" ")))
            if cut:
                self.delete((row, 0), (row, cut), maintain_selection_offset=True)

    def on_resize(self) -> None:
        # after TextArea's own resize handler has re-wrapped the text for the new size
        self.call_next(self.scroll_cursor_visible, animate=False)
