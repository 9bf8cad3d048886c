"""From the third TUI hunt (tmux): on Notes, a filter that matched a note's text keeps the
list it had when it was typed. A note edited while the filter stands (in an editor, by a sync)
is listed by the old text: one that now contains the filtered word is missing ("0 notes"),
one whose matching line was deleted is still listed. The list follows the vault's changes
everywhere else (the rows, the tree): the body matches must follow them too."""

from __future__ import annotations

from textual.widgets import DataTable

from studyapp.tui.app import StudyApp
from studyapp.tui.messages import VaultFilesChanged

from .conftest import settle
from .sample_vault import write_vault

NOTE = "基础/层归一化.md"


def listed(screen) -> list[str]:
    table = screen.query_one("#note-table", DataTable)
    return [key.value for key in table.rows]


async def test_a_body_match_follows_a_note_edited_while_the_filter_stands(ctx):
    vault = write_vault(ctx.paths.vault_dir)
    app = StudyApp(ctx)
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(pilot)
        await pilot.press("n")
        await settle(pilot)
        screen = app.screen
        await pilot.press("slash", *"qzxjword")
        await settle(pilot)
        assert listed(screen) == [], "no note holds the word yet"

        path = vault / NOTE
        path.write_text(path.read_text(encoding="utf-8") + "\nqzxjword: 新加的一行\n", encoding="utf-8")
        app.post_message(VaultFilesChanged((NOTE,)))  # what the watcher posts (it may post it too)
        await settle(pilot)
        assert any(r.path == NOTE for r in screen.rows)
        assert app.study.search_notes("qzxjword") == frozenset({NOTE}), "the vault knows the new text"
        assert listed(screen) == [NOTE], (
            f"the filter still lists {listed(screen)}: the edited note holding the word is missing")
