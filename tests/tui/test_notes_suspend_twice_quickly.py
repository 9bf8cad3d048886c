"""Found in tmux: on Notes, `s` pressed twice in quick succession (suspend, then "no, resume")
suspends the note twice: `action_toggle_suspend` decides between suspend and resume from the
row as the list was last drawn, and the list is redrawn by a worker that has not answered yet
when the second key arrives. The app says "Suspended …" twice and the note stays suspended,
where the second `s` should have resumed it (or at least not claimed to suspend it again)."""

from __future__ import annotations

from textual.widgets import DataTable

from studyapp.tui.app import StudyApp

from .conftest import notified, settle
from .sample_vault import write_vault


def suspended(app, path: str) -> bool:
    row = app.study.service.store.note_by_path(path)
    card = app.study.service.store.card(row.key) if row is not None else None
    return bool(card is not None and card.suspended)


async def test_s_twice_before_the_list_is_redrawn_suspends_then_resumes(ctx):
    write_vault(ctx.paths.vault_dir)
    app = StudyApp(ctx)
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(pilot)
        await pilot.press("n")
        await settle(pilot)
        screen = app.screen
        screen.query_one("#note-table", DataTable).focus()
        await settle(pilot)
        path = screen._selected_path()
        assert path is not None and not suspended(app, path)

        # two presses of `s` handled one after the other on the event loop, before the list's
        # worker has redrawn the rows (as two quick key presses are)
        screen.action_toggle_suspend()
        assert suspended(app, path)
        screen.action_toggle_suspend()
        await settle(pilot)

        assert not suspended(app, path), (
            "the second `s` suspended the already suspended note again instead of resuming it"
            + (" (it said 'Suspended' twice)" if sum("Suspended" in n.message for n in app._notifications) == 2
               else ""))
        assert notified(app, "Resumed")
