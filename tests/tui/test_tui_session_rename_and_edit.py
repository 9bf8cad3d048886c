"""Found by driving the real app in tmux while a second shell changed the vault under it:
a note renamed and edited in one go left the session."""

from __future__ import annotations

from .conftest import app_with_grader, notified, settle, wait_for
from .sample_vault import write_vault
from .test_tui_drills import StubGrader


async def test_a_note_renamed_and_edited_at_once_while_on_screen_stays_in_the_session(ctx):
    """`mv a.md b.md && sed -i ... b.md` (Obsidian's rename, then a save) on the note under
    review: a rename alone keeps it in the session, and the Note view follows a rename and an
    edit at once, but the session says it "changed outside the app and left this session" and
    drops it from the counts, though `due` still lists it as due at its new path."""
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
        new = old.with_name("renamed-and-edited.md")
        old.rename(new)
        new.write_text(new.read_text(encoding="utf-8") + "\nAn edit saved with the rename.\n",
                       encoding="utf-8")
        rel = new.relative_to(ctx.paths.vault_dir).as_posix()
        await wait_for(pilot, lambda: rel in app.study.vault.notes and shown not in app.study.vault.notes)
        await wait_for(pilot, lambda: screen.card is None or screen.card.path != shown)
        assert not notified(app, "left this session")
        assert screen.card is not None and screen.card.title == title and screen.card.path == rel
        after = app.study.progress()
        assert after.new + after.learning + after.review == left
