"""What every screen shares: data refresh once the vault is loaded, errors as notifications."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from textual.binding import Binding
from textual.screen import Screen
from textual.worker import Worker, WorkerState

if TYPE_CHECKING:
    from textual import getters

    from studyapp.tui.app import StudyApp

MODE_KEYS = {"today": "t", "drills": "d", "notes": "n", "stats": "S"}
"""The app's keys for its four screens (`StudyApp.BINDINGS`)."""


def footer_hides(*modes: str, quit: bool = False) -> list[Binding]:
    """Bindings that keep app keys working on a screen but out of its footer, so the screen's
    own keys fit in 80 columns; the palette still lists them."""
    hidden = [Binding(MODE_KEYS[mode], f"app.switch_mode('{mode}')", mode.title(), show=False) for mode in modes]
    if quit:
        hidden.append(Binding("ctrl+q", "app.quit", "Quit", show=False, priority=True))
    return hidden


class StudyScreen(Screen):
    """A screen that asks the app's facade for its data when shown and whenever the data may have changed."""

    if TYPE_CHECKING:  # Textual's own idiom for a typed `self.app`; no run-time check
        app = getters.app(StudyApp)

    @property
    def study(self) -> Any:
        """The app's `StudyFacade` (or the test double it was handed)."""
        return self.app.study

    def on_screen_resume(self) -> None:
        if self.app.study_ready:
            self.refresh_data()

    def refresh_data(self) -> None:
        """Fetch this screen's data (in a worker) and redraw; called once the vault is loaded."""

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        if event.state == WorkerState.ERROR and event.worker.error is not None:
            self.app.report_error(event.worker.error, title=event.worker.name or "Background task")
