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


def test_only_a_device_log_file_in_the_log_folder_counts_as_a_log_change(tmp_path):
    from studyapp.tui.vault_watch import touches_log

    log = tmp_path / "vault" / ".studyapp" / "log"
    log.mkdir(parents=True)
    assert touches_log(log.resolve(), [str(log / "laptop-1a2b.jsonl")])
    assert not touches_log(log.resolve(), [str(log / ".laptop.jsonl.tmp-x"), str(log / "notes.md"),
                                           str(tmp_path / "vault" / "other.jsonl")])


def test_a_folder_renamed_moved_in_or_removed_is_reported_as_a_folder(tmp_path):
    """A folder renamed in Obsidian (or moved in) is one event for the folder, none for its
    notes: the app never noticed, and showed the old paths until some note changed."""
    vault = tmp_path / "vault"
    (vault / "renamed").mkdir(parents=True)
    changed = [vault / "renamed", vault / "gone-folder", vault / "image.png", vault / ".hidden"]
    assert note_paths(vault.resolve(), [str(p) for p in changed]) == ("gone-folder/", "renamed/")
