"""A whole note, read-only, over the current screen."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.markup import escape
from textual.screen import ModalScreen
from textual.widgets import Footer, Markdown


class NoteViewScreen(ModalScreen[None]):
    BINDINGS = [Binding("escape,q,f", "dismiss", "Close")]

    def __init__(self, title: str, body: str) -> None:
        super().__init__()
        self.note_title = title
        self.body = body

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="note-view") as box:
            box.border_title = escape(self.note_title)
            yield Markdown(self.body)
        yield Footer()
