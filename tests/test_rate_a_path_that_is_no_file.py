"""`rate NOTE` on a path `due` just reported as "not a regular file" must say that, not
"no such note in the vault": the user sees the file in `ls` and in `due`'s warning.

`commands.reviews.note_path` answers any path that is not a regular file with "no such note in
the vault" (exit 2, a usage error) before the vault's own check (`Vault.read_note`, which has the
right words) is reached.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from vault_fixtures import USERS_NOTE, write

from studyapp.cli import main

NOW = "2026-06-15T09:00"


def _make(vault: Path, kind: str) -> str:
    name = f"{kind}.md"
    path = vault / name
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "dev-zero-link":
        path.symlink_to("/dev/zero")
    return name


@pytest.mark.parametrize("kind", ["fifo", "dev-zero-link"])
def test_rating_a_note_that_is_no_file_says_why(tmp_path, capsys, kind):
    vault = tmp_path / "vault"
    write(vault / "good.md", USERS_NOTE)
    name = _make(vault, kind)
    args = ["--vault", str(vault), "--data-dir", str(tmp_path / "data"), "--now", NOW]
    assert main(["due", *args]) == 0
    capsys.readouterr()
    code = main(["rate", name, "--rating", "good", *args])
    err = capsys.readouterr().err
    assert code != 0
    assert "no such note" not in err, err
    assert "not a regular file" in err, err
