"""Found in tmux: while the app runs, the vault folder is replaced by a copy of itself (a backup
restored, a sync tool or a script that moves the old folder aside and puts a fresh one in its
place: `mv vault vault-old && cp -a vault-old vault`). From then on the app never sees a change
again: a note edited in the vault (its title fixed, say) keeps its old title on the review and
in Notes, a note added is never listed or due, for as long as the app runs; no "Not watching the
vault" warning is shown either. The watcher followed the old folder (inotify watches an inode),
found nothing wrong, and is never started again on the vault's path. The same happens after
`rm -rf vault` and the vault made again: Today says "Nothing due" until the app is restarted.

README: "The vault is watched while the app runs: a note changed by an editor, the CLI or a sync
is shown as it is now", and a failed watch is said and tried again."""

from __future__ import annotations

import shutil
import time

from studyapp.tui.app import StudyApp

from .conftest import settle
from .sample_vault import write_vault

SCALING = "注意力/缩放因子.md"


async def test_an_edit_after_the_vault_folder_was_replaced_shows_on_the_review(ctx):
    vault = ctx.paths.vault_dir
    write_vault(vault, broken=False)
    (vault / ".studyapp" / "log").mkdir(parents=True)
    app = StudyApp(ctx)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await pilot.press("r")
        await settle(pilot)
        screen = app.screen
        assert screen.card is not None and screen.card.path == SCALING

        aside = vault.with_name("vault-old")
        vault.rename(aside)
        shutil.copytree(aside, vault, symlinks=True)
        await pilot.pause(1.5)  # any watcher restart, as after a symlink loop

        note = vault / SCALING
        note.write_text(note.read_text(encoding="utf-8").replace("为什么注意力", "为何注意力"), encoding="utf-8")
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and not screen.card.title.startswith("为何"):
            await pilot.pause(0.1)
        assert screen.card.title.startswith("为何"), (
            f"20 s after the note was edited in the vault (replaced by a copy of itself), the review "
            f"still shows {screen.card.title!r}")
