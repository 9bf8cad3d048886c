"""A note reachable by two paths (a link to it, a linked folder, a directory loop, a hard link)
is one note under one path: never two cards sharing a file, which every replay of the history
rewrote to one card's state or the other's."""

from __future__ import annotations

import json
import os
from pathlib import Path

from vault_fixtures import USERS_NOTE, write

from studyapp.cli import main
from studyapp.errors import ExitCode

NOW = "2026-11-23T09:00:00+00:00"


def make_vault(tmp_path: Path) -> tuple[Path, list[str]]:
    vault, outside = tmp_path / "vault", tmp_path / "outside"
    write(vault / "real.md", USERS_NOTE)
    write(vault / "hard.md", USERS_NOTE.replace("# ", "# hard ", 1))
    write(outside / "out.md", USERS_NOTE.replace("# ", "# outside ", 1))
    (vault / "sub").mkdir()
    os.symlink("real.md", vault / "alias.md")
    os.symlink("../", vault / "sub" / "loop")
    os.symlink(outside, vault / "linked-folder")
    os.symlink("../outside/out.md", vault / "zz-outside-link.md")
    os.link(vault / "hard.md", vault / "sub" / "hard-link.md")
    return vault, ["--vault", str(vault), "--data-dir", str(tmp_path / "data"), "--now", NOW]


def due_paths(common, capsys) -> tuple[list[str], str]:
    assert main(["due", "--json", *common]) in (ExitCode.OK, ExitCode.FAILED)
    out = capsys.readouterr()
    return sorted(entry["path"] for entry in json.loads(out.out)), out.err


def test_each_file_is_one_note_under_one_path(tmp_path, capsys):
    vault, common = make_vault(tmp_path)
    paths, err = due_paths(common, capsys)
    # real.md, not its alias; the outside note once (the first of its two paths); hard links
    # are refused (a review replaces one name and would split them)
    assert paths == ["linked-folder/out.md", "real.md"], paths
    assert "alias.md" in err and "real.md" in err  # the alias names the note it is
    assert "zz-outside-link.md" in err and "linked-folder/out.md" in err
    assert "hard.md" in err and "hard link" in err


def test_a_note_is_rated_under_its_own_path_only(tmp_path, capsys):
    vault, common = make_vault(tmp_path)
    before = (vault / "real.md").read_bytes()
    for alias in ("alias.md", "sub/loop/real.md"):
        assert main(["rate", alias, "--rating", "good", *common]) == ExitCode.USAGE
        err = capsys.readouterr().err
        assert "real.md" in err and "link" in err, err
    assert main(["rate", "hard.md", "--rating", "good", *common]) == ExitCode.FAILED
    assert "hard link" in capsys.readouterr().err
    assert (vault / "real.md").read_bytes() == before
    assert (vault / "sub" / "hard-link.md").read_bytes() == (vault / "hard.md").read_bytes()


def test_replaying_the_history_leaves_a_linked_note_alone(tmp_path, capsys):
    """The tester's case: a review under the alias (refused now), then two under the real path;
    every `sync --full` rewrote the file to one card's state or the other's."""
    vault, common = make_vault(tmp_path)
    for day, path in (("2026-11-23", "alias.md"), ("2026-11-24", "real.md"), ("2026-11-26", "real.md")):
        at = [arg if arg != NOW else f"{day}T09:00:00+00:00" for arg in common]
        main(["rate", path, "--rating", "good", *at])
    capsys.readouterr()
    reviewed = (vault / "real.md").read_bytes()
    for _ in range(3):
        assert main(["sync", "--full", *common]) == ExitCode.OK
        assert (vault / "real.md").read_bytes() == reviewed


def test_a_folder_linked_inside_the_vault_is_studied_under_its_own_path(tmp_path, capsys):
    """A link to a folder of the vault is cut as a loop would be: whichever the scan met first
    was kept, so a link sorting first ("0-...") could take the notes' paths."""
    vault = tmp_path / "vault"
    write(vault / "real-folder" / "note.md", USERS_NOTE)
    os.symlink("real-folder", vault / "0-link-to-it")
    common = ["--vault", str(vault), "--data-dir", str(tmp_path / "data"), "--now", NOW]
    paths, _ = due_paths(common, capsys)
    assert paths == ["real-folder/note.md"]
