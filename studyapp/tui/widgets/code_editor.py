"""The drill's editor: Textual's code editor that keeps the line being edited in view when it
is resized (the results pane opening under it, a smaller terminal), and whose undo and redo
cannot end the app (below)."""

from __future__ import annotations

from textual import events
from textual.binding import Binding
from textual.geometry import Offset
from textual.widgets import TextArea


class CodeEditor(TextArea):
    """Build it with `CodeEditor.code_editor(text, ...)`, as a `TextArea`.

    shift+tab dedents and Tab over selected lines indents them, as in any code editor: shift+tab
    moved the focus out of the editor (the next letters typed became the screen's keys: `h`
    asked for a hint that counts), and Tab replaced the lines with one indent."""

    BINDINGS = [Binding("shift+tab", "dedent", "Dedent", show=False)]

    def _selected_rows(self) -> range:
        """The lines a selection covers: one that ends at the start of a line (shift+down from
        a line's start, the usual way to select whole lines) does not take that line in."""
        start, end = sorted((self.selection.start, self.selection.end))
        last = end[0] - 1 if end[0] > start[0] and end[1] == 0 else end[0]
        return range(start[0], last + 1)

    async def _on_key(self, event: events.Key) -> None:
        # Tab over a selection of lines indents them, as in any code editor: TextArea replaced
        # the selection with one indent, and the next save wrote the file without those lines
        if event.key == "tab" and not self.read_only and self.selection.start[0] != self.selection.end[0]:
            event.stop()
            event.prevent_default()
            self.action_indent()
            return
        await super()._on_key(event)

    def action_indent(self) -> None:
        """Put one indent (spaces, or a tab) before each selected line that has text."""
        unit = "\t" if self.indent_type == "tabs" else " " * self.indent_width
        for row in self._selected_rows():
            if self.document.get_line(row).strip():
                self.insert(unit, (row, 0), maintain_selection_offset=True)

    def action_dedent(self) -> None:
        """Take up to one indent's spaces (or a tab) off the start of each selected line."""
        width = self.indent_width
        for row in self._selected_rows():
            line = self.document.get_line(row)
            cut = 1 if line.startswith("\t") else min(width, len(line) - len(line.lstrip(" ")))
            if cut:
                self.delete((row, 0), (row, cut), maintain_selection_offset=True)

    def on_resize(self) -> None:
        # after TextArea's own resize handler has re-wrapped the text for the new size
        self.call_next(self.scroll_cursor_visible, animate=False)

    _batch = False
    """True while an undo or redo applies its edits."""

    def undo(self) -> None:
        self._without_scrolling(super().undo)

    def redo(self) -> None:
        self._without_scrolling(super().redo)

    def _without_scrolling(self, apply) -> None:
        """Textual 8.2.8 scrolls to the cursor in the middle of an undo or redo that makes the
        code fit the editor again (its scrollbar goes), before the cursor is moved back into
        the shorter text: the lookup of a line past the end raised ValueError and ended the
        app, losing the code typed since the last save. The scroll waits until the edits and
        the cursor agree."""
        self._batch = True
        try:
            apply()
        finally:
            self._batch = False
        self.scroll_cursor_visible()

    def scroll_cursor_visible(self, center: bool = False, animate: bool = False) -> Offset:
        if self._batch:
            return Offset(0, 0)
        return super().scroll_cursor_visible(center=center, animate=animate)
