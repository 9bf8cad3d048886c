"""`import FOLDER` when the vault holds a *file* of the folder's name (`clips`, an export without
an extension) cannot create `clips/`: each source must be refused at once, with that reason.

Today `target.parent.mkdir` raises FileExistsError, which `_copy_one` takes for "the note
appeared meanwhile" and tries the next of 10,000 candidate names, parsing the note again for
each: ~2.5 s per source file (6 files: 15.6 s; a folder of 100 clippings: minutes), and then
says "no free file name in the vault", which points nowhere near the cause. `--dry-run` first
promises "would copy ... -> clips/a.md".
"""

from __future__ import annotations

from pathlib import Path

from studyapp.cli import main

NOW = "2026-06-15T09:00"


def _setup(tmp_path: Path) -> tuple[Path, Path, Path]:
    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / "clips").write_text("an export that is not a folder\n")
    source = tmp_path / "src" / "clips"
    source.mkdir(parents=True)
    for name in ("a.md", "b.md"):
        (source / name).write_text(f"# {name}\n\nclipped text\n")
    return vault, tmp_path / "data", source


def _args(vault: Path, data: Path, *command: str) -> list[str]:
    return [*command, "--vault", str(vault), "--data-dir", str(data), "--now", NOW]


def test_a_file_where_the_folder_would_go_is_said_at_once(tmp_path, capsys):
    vault, data, source = _setup(tmp_path)
    code = main(_args(vault, data, "import", str(source)))
    err = capsys.readouterr().err
    assert code == 1
    assert (vault / "clips").read_text() == "an export that is not a folder\n"
    assert "no free file name" not in err, err
    assert "cannot make the folder clips in the vault: a file of that name is there" in err, err


def test_dry_run_does_not_promise_a_copy_the_import_cannot_make(tmp_path, capsys):
    vault, data, source = _setup(tmp_path)
    main(_args(vault, data, "import", "--dry-run", str(source)))
    out = capsys.readouterr().out
    assert "would copy" not in out, out
