"""Which changed files the vault watcher reports: notes only, relative to the vault."""

from __future__ import annotations

from studyapp.tui.vault_watch import note_paths


def test_only_visible_notes_inside_the_vault_are_reported(tmp_path):
    vault = tmp_path / "vault"
    changed = [
        vault / "注意力" / "缩放因子.md",
        vault / "a.md",
        vault / "a.md",  # one path, however many events
        vault / ".a.md.x1y2.studyapp-tmp",  # the app's own atomic-write temp file
        vault / ".obsidian" / "workspace.md",
        vault / "image.png",
        tmp_path / "elsewhere.md",
    ]
    assert note_paths(vault.resolve(), [str(p) for p in changed]) == ("a.md", "注意力/缩放因子.md")
