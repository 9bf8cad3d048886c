"""Found in tmux: with Today on screen, `studyapp suspend NOTE` in another shell suspends a
note that is due for review. `studyapp due` then says one review fewer, but the app goes on
counting it for good: Today's "New · Learn · Review" keeps the old figure, the Notes list
keeps its due date instead of "suspended", and a review session begun afterwards counts it
too. The app polls SQLite's data_version and draws the screen again
(`take_other_devices_reviews`), but the live vault's cards are not told they changed
(`cards_changed`), so every figure is drawn from the cards held before the suspension."""

from __future__ import annotations

from textual.widgets import Static

from studyapp.tui.app import StudyApp

from .conftest import settle, wait_for
from .sample_vault import write_vault
from .test_tui_side_by_side import other_shell

SCALING = "注意力/缩放因子.md"
"""Reviewed before, due on 2026-11-20: a review on the frozen 2026-11-22."""


def due_counts(app) -> str:
    return str(app.screen.query_one("#due-counts", Static).render())


async def test_a_note_suspended_in_another_shell_leaves_todays_counts(ctx):
    write_vault(ctx.paths.vault_dir)
    app = StudyApp(ctx)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        before = app.study.today_counts()
        assert before.review >= 1
        shown_before = due_counts(app)

        other_shell(ctx, "suspend", SCALING)
        await wait_for(pilot, lambda: due_counts(app) != shown_before, seconds=12)

        after = app.study.today_counts()
        assert after.review == before.review - 1, (
            f"the app still counts the suspended note: {before} -> {after}; Today shows {due_counts(app)!r}")
        assert due_counts(app) != shown_before


async def test_a_note_suspended_in_another_shell_shows_as_suspended_in_notes(ctx):
    write_vault(ctx.paths.vault_dir)
    app = StudyApp(ctx)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("n")
        await settle(pilot)
        screen = app.screen

        other_shell(ctx, "suspend", SCALING)

        def row():
            return next(r for r in screen.rows if r.path == SCALING)

        await wait_for(pilot, lambda: row().suspended, seconds=12)
        assert row().suspended, "Notes still lists the note suspended elsewhere as due"
