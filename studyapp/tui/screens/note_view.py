"""A whole note, read-only, over the current screen."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.markup import escape
from textual.screen import ModalScreen

from studyapp.tui.widgets.answer import Answer
from studyapp.tui.widgets.footer import KeysFooter


class NoteViewScreen(ModalScreen[None]):
    BINDINGS = [Binding("escape,q,f", "dismiss", "Close")]

    def __init__(self, title: str, body: str) -> None:
        super().__init__()
        self.note_title = title
        self.body = body

    def compose(self) -> ComposeResult:
        view = Answer(id="note-view")
        view.border_title = escape(self.note_title)
        yield view
        yield KeysFooter()

    def on_mount(self) -> None:
        view = self.query_one(Answer)
        view.show(self.body)
        view.focus()
