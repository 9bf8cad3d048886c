"""A whole note, read-only, over the current screen."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import ModalScreen

from studyapp.tui.markup import plain
from studyapp.tui.screens.review import EMPTY_NOTE
from studyapp.tui.widgets.answer import Answer
from studyapp.tui.widgets.footer import KeysFooter


class NoteViewScreen(ModalScreen[None]):
    BINDINGS = [Binding("escape,q,f", "dismiss", "Close")]

    def __init__(self, title: str, body: str, reload: Callable[[], Any] | None = None) -> None:
        super().__init__()
        self.note_title = title
        self.body = body
        self.reload = reload
        """The note's card as the app holds it now (`title`, `body`), asked when the vault changes."""
        self.gone = False

    def compose(self) -> ComposeResult:
        view = Answer(id="note-view")
        view.border_title = plain(self.note_title)
        yield view
        yield KeysFooter()

    def on_mount(self) -> None:
        view = self.query_one(Answer)
        view.show(self.body or EMPTY_NOTE)
        view.focus()

    def refresh_data(self) -> None:
        """Notes changed on disk (the app asks the screen shown): this one as it is now."""
        if self.reload is None:
            return
        try:
            card = self.reload()
        except Exception:  # noqa: BLE001 - gone or unreadable: the Notes screen says so after
            if not self.gone:  # said once, not at every later change of the vault
                self.notify(f"“{self.note_title}” changed outside the app and can no longer be read.",
                            severity="warning", timeout=6)
            self.gone = True
            return
        self.gone = False
        if (card.title, card.body) == (self.note_title, self.body):
            return
        self.note_title, self.body = card.title, card.body
        view = self.query_one(Answer)
        view.border_title = plain(card.title)
        offset = view.scroll_offset
        view.show(card.body or EMPTY_NOTE)
        view.scroll_to(offset.x, offset.y, animate=False)  # the reader keeps their place
