"""Found in tmux: a note moved into a new folder while the app runs (`mkdir arch2; mv
architecture/x.md arch2/`) is listed on Notes under its new path, but the folder tree on the
left never shows `arch2` (nor drops the emptied `architecture`) until the app is restarted:
`NotesScreen._build_tree` returns at once when the tree has nodes, so the learner cannot pick
the new folder, and picking the old one lists nothing."""

from __future__ import annotations

from textual.widgets import Tree

from studyapp.tui.app import StudyApp

from .conftest import settle, wait_for
from .sample_vault import write_vault


def folders_in_tree(screen) -> set[str]:
    tree = screen.query_one("#note-tree", Tree)
    found: set[str] = set()

    def walk(node) -> None:
        data = node.data
        if isinstance(data, tuple) and data and data[0] == "folder":
            found.add(data[1])
        for child in node.children:
            walk(child)

    walk(tree.root)
    return found


async def test_a_folder_made_while_the_app_runs_shows_in_the_notes_tree(ctx):
    vault = write_vault(ctx.paths.vault_dir)
    app = StudyApp(ctx)
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(pilot)
        await pilot.press("n")
        await settle(pilot)
        screen = app.screen
        assert "基础" in folders_in_tree(screen)

        (vault / "新文件夹").mkdir()
        (vault / "基础/层归一化.md").rename(vault / "新文件夹/层归一化.md")
        await wait_for(pilot, lambda: any(r.path == "新文件夹/层归一化.md" for r in screen.rows))
        assert any(r.path == "新文件夹/层归一化.md" for r in screen.rows), "the list follows the move"

        assert "新文件夹" in folders_in_tree(screen), (
            f"the tree still shows only {sorted(folders_in_tree(screen))}: the new folder cannot be picked")
