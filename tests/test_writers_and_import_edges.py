"""Hostile input to the commands that take outside input: `rate`/`suspend` on files that are no
notes, `import` with a bad second PATH or with sources it then cannot use, and a config.toml
naming a vault under an unknown user's home. Each test fails on the code it was written against."""

from __future__ import annotations

import os
from pathlib import Path

from studyapp.cli import main
from studyapp.errors import ExitCode

NOW = "2026-04-06T09:00"


def run(vault: Path, *args: str) -> int:
    return main([*args, "--vault", str(vault), "--now", NOW])


def tree(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_rate_refuses_files_that_are_no_notes_and_never_writes_them(tmp_path, capsys):
    """README: a file the vault skips is never written; rate wrote a YAML block into a .txt file,
    a hidden .trash note, and the vault's own .studyapp/vault.json (corrupting it)."""
    vault = tmp_path / "vault"
    (vault / ".trash").mkdir(parents=True)
    (vault / "ok.md").write_text("# ok\n")
    (vault / "plain.txt").write_text("# txt\n")
    (vault / ".trash" / "old.md").write_text("# trashed\n")
    assert run(vault, "due") == ExitCode.OK  # makes .studyapp/vault.json and the log
    assert (vault / ".studyapp" / "vault.json").is_file()
    for name in ("plain.txt", ".trash/old.md", ".studyapp/vault.json"):
        before = tree(vault)
        code = run(vault, "rate", name, "--rating", "good")
        assert code == ExitCode.USAGE, name
        assert tree(vault) == before, f"rate {name} changed the vault"


def test_rate_and_suspend_refuse_a_note_whose_name_holds_control_characters(tmp_path, capsys):
    """README: such a name is reported and skipped, never written; rate added the block to it and
    suspend said 'suspended' (then unsuspend said 'already unsuspended')."""
    vault = tmp_path / "vault"
    vault.mkdir()
    odd = vault / "new\nline.md"
    odd.write_bytes(b"# nl\n")
    assert run(vault, "suspend", "new\nline.md") == ExitCode.USAGE
    assert run(vault, "rate", "new\nline.md", "--rating", "good") == ExitCode.USAGE
    assert odd.read_bytes() == b"# nl\n"


def test_import_with_a_missing_second_path_copies_nothing(tmp_path, capsys):
    """README: exit 2 means nothing changed; the first PATH was copied before the second one
    was found missing, and the copy was never even printed."""
    vault = tmp_path / "vault"
    vault.mkdir()
    src = tmp_path / "a.md"
    src.write_text("# A\n\nbody\n")
    before = tree(vault)
    assert run(vault, "import", str(src), str(tmp_path / "missing.md")) == ExitCode.USAGE
    assert tree(vault) == before


def test_import_reports_sources_the_vault_cannot_use_instead_of_copying_them(tmp_path, capsys):
    """A source with an unusable block (`review_count: many`) or a '---' rule over text was
    copied and counted as imported (exit 0); `doctor` then reports it."""
    vault = tmp_path / "vault"
    vault.mkdir()
    src = tmp_path / "src"
    src.mkdir()
    (src / "bad.md").write_text("---\nreview_count: many\n---\n# bad\n")
    (src / "rule.md").write_text("---\nSome text after a rule\n---\nmore\n")
    code = run(vault, "import", str(src))
    assert code == ExitCode.FAILED
    assert not (vault / "src" / "bad.md").exists() and not (vault / "src" / "rule.md").exists()


def test_import_does_not_copy_a_vault_note_through_a_link_in_the_source(tmp_path, capsys):
    """A link to a note named alone is refused ('inside the vault'); the same link inside a
    source folder made a second note carrying the first one's review state."""
    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / "n.md").write_text("---\nreview_count: 3\nlast_reviewed: 2026-04-01\n"
                                "next_review: 2026-04-10\n---\n# N\n")
    src = tmp_path / "src"
    src.mkdir()
    os.symlink(vault / "n.md", src / "n-link.md")
    run(vault, "import", str(src))
    assert not (vault / "src" / "n-link.md").exists()


def test_import_of_a_hidden_source_makes_no_hidden_note(tmp_path, capsys):
    """`import ~/.clips` copied into `<vault>/.clips/`, which the vault never reads: '1 note
    imported', and it is never due."""
    vault = tmp_path / "vault"
    vault.mkdir()
    clips = tmp_path / ".clips"
    clips.mkdir()
    (clips / "a.md").write_text("# clip\n")
    run(vault, "import", str(clips))
    assert not (vault / ".clips" / "a.md").exists()


def test_a_vault_under_an_unknown_users_home_is_one_line_not_a_crash(tmp_path, capsys, monkeypatch):
    data = tmp_path / "data"
    data.mkdir()
    (data / "config.toml").write_text('vault = "~nosuchuser-studyapp/notes"\n')
    monkeypatch.setenv("STUDYAPP_DATA_DIR", str(data))
    code = main(["due", "--now", NOW])
    err = capsys.readouterr().err
    assert code == ExitCode.USAGE, err
    assert "Traceback" not in err and "internal error" not in err
