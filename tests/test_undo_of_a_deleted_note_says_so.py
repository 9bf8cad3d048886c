"""Two devices reviewed a note, then it was deleted. `undo` on the first device refuses with
"another device reviewed it since ...; undo that review on that device first", and `undo` on
that device refuses with "the reviewed note c.md is no longer in the vault": the advice sends
the user to a step that cannot be done. The first device's refusal should say what stops
it (the note is gone), as the other device's does."""

from __future__ import annotations

from history_helpers import cli, make_vault

from studyapp.cli import main
from studyapp.errors import ExitCode


def test_undo_of_a_deleted_note_reviewed_elsewhere_since_does_not_send_the_user_there(tmp_path, capsys):
    vault, laptop, phone = make_vault(tmp_path / "vault"), tmp_path / "laptop", tmp_path / "phone"
    cli(capsys, vault, laptop, "rate", "c.md", "--rating", "good", now="2026-11-20T08:00")
    cli(capsys, vault, phone, "rate", "c.md", "--rating", "good", now="2026-11-20T09:00")
    (vault / "c.md").unlink()
    capsys.readouterr()

    assert main(["undo", "--vault", str(vault), "--data-dir", str(phone),
                 "--now", "2026-11-20T10:00"]) == ExitCode.FAILED
    phone_err = capsys.readouterr().err
    assert "no longer in the vault" in phone_err, phone_err

    assert main(["undo", "--vault", str(vault), "--data-dir", str(laptop),
                 "--now", "2026-11-20T10:00"]) == ExitCode.FAILED
    err = capsys.readouterr().err
    assert "on that device first" not in err, err
    assert "no longer in the vault" in err, err
