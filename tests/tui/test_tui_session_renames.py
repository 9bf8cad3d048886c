"""Defects found by using the app for a session while Obsidian renamed the notes under it.
Each test fails on the code it was written against."""

from __future__ import annotations

from .conftest import app_with_grader, notified, settle, wait_for
from .sample_vault import write_vault
from .test_tui_drills import StubGrader


async def test_a_note_renamed_while_on_screen_stays_in_the_session(ctx):
    """Renaming the note being reviewed (Obsidian's rename, or a folder rename: every note in
    it) keeps its history (a logged move) and `due` lists it at its new path, but the session
    is kept by path: the note leaves with "changed outside the app and left this session", the
    counts drop by one, and the session ends while the note is still due today."""
    write_vault(ctx.paths.vault_dir)
    app = app_with_grader(ctx, StubGrader())
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await pilot.press("r")
        await settle(pilot)
        screen = app.screen
        shown, title = screen.card.path, screen.card.title
        before = app.study.progress()
        left = before.new + before.learning + before.review
        old = ctx.paths.vault_dir / shown
        new = old.with_name("renamed-in-obsidian.md")
        old.rename(new)
        await wait_for(pilot, lambda: screen.card is not None and screen.card.path != shown)  # the watcher sees the rename
        assert not notified(app, "left this session")
        assert screen.card is not None and screen.card.title == title
        assert screen.card.path == new.relative_to(ctx.paths.vault_dir).as_posix()
        after = app.study.progress()
        assert after.new + after.learning + after.review == left


async def test_undo_takes_back_a_suspension_of_a_note_renamed_since(ctx):
    """`s` suspends the note on screen; Obsidian renames it (the move is logged, the history and
    the suspension follow it); `u` then says "Could not undo: no such note in the vault:
    <old path>", the note stays suspended, and the undo step is spent: the next `u` undoes an
    older rating instead."""
    write_vault(ctx.paths.vault_dir)
    app = app_with_grader(ctx, StubGrader())
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await pilot.press("r")
        await settle(pilot)
        shown = app.screen.card.path
        await pilot.press("s")
        await settle(pilot)
        old = ctx.paths.vault_dir / shown
        new = old.with_name("renamed-in-obsidian.md")
        old.rename(new)
        rel = new.relative_to(ctx.paths.vault_dir).as_posix()
        await wait_for(pilot, lambda: rel in app.study.vault.notes)  # the vault watcher sees the rename
        await pilot.press("u")
        await settle(pilot)
        assert not notified(app, "no such note")
        store = app.study.service.store
        row = store.note_by_path(rel)
        card = None if row is None else store.card(row.key)
    assert card is None or not card.suspended  # a new note unsuspended is new again: no card


async def test_undoing_here_a_rating_of_a_note_renamed_since_is_not_said_to_be_elsewhere(ctx):
    """Rate, rename the note in Obsidian, `u`: the file and the log are right, but the session
    still holds the rating under the old path, so the app says "The rating of '<old path>' was
    undone in another studyapp" about its own undo."""
    write_vault(ctx.paths.vault_dir)
    app = app_with_grader(ctx, StubGrader())
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await pilot.press("r")
        await settle(pilot)
        shown = app.screen.card.path
        await pilot.press("space", "3")
        await settle(pilot)
        old = ctx.paths.vault_dir / shown
        new = old.with_name("renamed-in-obsidian.md")
        old.rename(new)
        rel = new.relative_to(ctx.paths.vault_dir).as_posix()
        await wait_for(pilot, lambda: rel in app.study.vault.notes)
        await pilot.press("u")
        await settle(pilot)
        assert not notified(app, "another studyapp")
        assert notified(app, "Undid the rating")
