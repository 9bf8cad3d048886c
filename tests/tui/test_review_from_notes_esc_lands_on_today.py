"""Found in tmux: on Notes (a filter typed, a note picked), the learner presses `r` to review, then
Esc ("esc Back" in the footer) to go back to the notes they were browsing. Esc lands on Today
instead: `r` switched the app to Today before opening the review, so the review never sat on
Notes, and the learner has to press `n` to find their place again. The same from Drills (`r`) and
Stats (`r`).

README (The app): "A review or a drill lives on top of the screen it was opened from and closes
when you go to another screen"; app.py: "a review or a drill is pushed on top of the current
mode"."""

from __future__ import annotations

from studyapp.tui.app import StudyApp
from studyapp.tui.screens.notes import NotesScreen
from studyapp.tui.screens.review import ReviewScreen

from .conftest import settle
from .sample_vault import write_vault


async def test_esc_on_a_review_opened_from_notes_goes_back_to_notes(ctx):
    write_vault(ctx.paths.vault_dir, broken=False)
    app = StudyApp(ctx)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await pilot.press("n")
        await settle(pilot)
        assert isinstance(app.screen, NotesScreen)
        app.screen.query_one("#note-table").focus()
        await settle(pilot)
        await pilot.press("r")
        await settle(pilot)
        assert isinstance(app.screen, ReviewScreen)
        await pilot.press("escape")
        await settle(pilot)
        assert isinstance(app.screen, NotesScreen), (
            f"Esc on a review opened from Notes went to {type(app.screen).__name__} "
            f"(mode {app.current_mode!r}), not back to Notes")
