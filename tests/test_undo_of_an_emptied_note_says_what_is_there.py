"""A reviewed note emptied since its review (an editor that crashed mid-save, a sync that
truncated it): `undo` refused with "the reviewed note b.md is no longer in the vault" while
`due` listed b.md on the next line. The file is there; what is gone is the note it held. The
refusal should say so, and that putting its text back lets the undo through (it does)."""

from __future__ import annotations

from history_helpers import cli, make_vault

from studyapp.cli import main
from studyapp.errors import ExitCode


def _undo(capsys, vault, data) -> tuple[int, str]:
    capsys.readouterr()
    code = main(["undo", "--vault", str(vault), "--data-dir", str(data), "--now", "2026-11-20T10:00"])
    return code, capsys.readouterr().err


def test_undo_after_the_note_was_emptied_names_the_file_that_is_there(tmp_path, capsys):
    vault, data = make_vault(tmp_path / "vault"), tmp_path / "data"
    cli(capsys, vault, data, "rate", "b.md", "--rating", "good", now="2026-11-20T09:00")
    reviewed = (vault / "b.md").read_bytes()
    (vault / "b.md").write_bytes(b"")

    code, err = _undo(capsys, vault, data)
    assert code == ExitCode.FAILED
    assert "no longer in the vault" not in err, err
    assert "b.md" in err and "empty" in err, err
    assert "Causal mask" in err, "the refusal should name the note that was reviewed"
    assert (vault / "b.md").read_bytes() == b"", "a refused undo writes nothing"

    (vault / "b.md").write_bytes(reviewed)  # the text put back: the undo goes through
    code, err = _undo(capsys, vault, data)
    assert code == ExitCode.OK, err
    assert "review_count: 0" in (vault / "b.md").read_text()


def test_undo_after_another_note_was_written_at_its_path_says_so(tmp_path, capsys):
    vault, data = make_vault(tmp_path / "vault"), tmp_path / "data"
    cli(capsys, vault, data, "rate", "b.md", "--rating", "good", now="2026-11-20T09:00")
    (vault / "b.md").write_text("# Layer norm\n\nNormalises over the features.\n")

    code, err = _undo(capsys, vault, data)
    assert code == ExitCode.FAILED
    assert "no longer in the vault" not in err, err
    assert "Layer norm" in err and "Causal mask" in err, err


def test_undo_after_the_note_was_deleted_still_says_it_is_gone(tmp_path, capsys):
    vault, data = make_vault(tmp_path / "vault"), tmp_path / "data"
    cli(capsys, vault, data, "rate", "b.md", "--rating", "good", now="2026-11-20T09:00")
    (vault / "b.md").unlink()

    code, err = _undo(capsys, vault, data)
    assert code == ExitCode.FAILED
    assert "no longer in the vault" in err, err
