"""One data dir, two vaults: the README's own path (study the starter deck, then point the app at
your notes) wrote the first vault's reviews into the second vault's log and into its notes of the
same name (the database's reviews looked like reviews the new log lacked)."""

from __future__ import annotations

import pytest
from vault_fixtures import USERS_NOTE, write

from studyapp.backups import BackupKind, default_restore, inspect_database, list_backups
from studyapp.cli import main
from studyapp.context import build_context
from studyapp.errors import ExitCode, UserError
from studyapp.reviews import ReviewService

NOW = "2026-01-05T10:00"


def _vaults(tmp_path):
    """Two vaults sharing note paths, and one data dir."""
    for name in ("first", "second"):
        for note in ("topic/n1.md", "topic/n2.md"):
            write(tmp_path / name / note, USERS_NOTE)
    data = ["--data-dir", str(tmp_path / "data")]
    return ([*data, "--vault", str(tmp_path / "first")],
            [*data, "--vault", str(tmp_path / "second")])


def _log_bytes(vault):
    return {p.name: p.read_bytes() for p in (vault / ".studyapp" / "log").glob("*")}


def test_a_second_vault_gets_none_of_the_first_vaults_reviews(tmp_path, capsys):
    first, second = _vaults(tmp_path)
    assert main(["rate", "topic/n1.md", "--rating", "good", "--now", NOW, *first]) == 0
    note = tmp_path / "second" / "topic" / "n1.md"
    before = note.read_bytes()
    capsys.readouterr()
    main(["doctor", *second])
    assert "serves another vault" in capsys.readouterr().out

    assert main(["due", "--json", "--now", NOW, *second]) == 0
    out, err = capsys.readouterr()

    assert note.read_bytes() == before
    assert _log_bytes(tmp_path / "second") == {}
    assert out.strip() == "[]"  # nothing due: the note's own next_review is in March
    assert "another vault" in err, err  # the switch is said, once, with where the old one is kept
    main(["doctor", *second])
    assert "serves another vault" not in capsys.readouterr().out
    assert main(["stats", "--json", "--now", NOW, *second]) == 0
    assert '"reviews": 0' in capsys.readouterr().out.replace("\n", " ").replace("  ", " ")


def test_going_back_to_the_first_vault_finds_its_history_again(tmp_path, capsys):
    first, second = _vaults(tmp_path)
    untouched = (tmp_path / "first" / "topic" / "n1.md").read_bytes()
    assert main(["rate", "topic/n1.md", "--rating", "good", "--now", NOW, *first]) == 0
    assert main(["rate", "topic/n2.md", "--rating", "again", "--now", NOW, *second]) == 0
    first_log = _log_bytes(tmp_path / "first")
    capsys.readouterr()

    assert main(["undo", "--now", NOW, *first]) == 0  # the first vault's own last review
    capsys.readouterr()

    assert b"review_count: 1" in (tmp_path / "second" / "topic" / "n2.md").read_bytes()
    assert (tmp_path / "first" / "topic" / "n1.md").read_bytes() == untouched
    assert len(_log_bytes(tmp_path / "first")) == len(first_log)


def test_nothing_is_lost_the_first_database_is_kept(tmp_path, capsys):
    first, second = _vaults(tmp_path)
    assert main(["rate", "topic/n1.md", "--rating", "good", "--now", NOW, *first]) == 0
    capsys.readouterr()
    assert main(["due", "--now", NOW, *second]) == 0
    (kept,) = (tmp_path / "data" / "backups").glob("other-vault-*.sqlite3")
    assert inspect_database(kept).reviews == 1
    err = capsys.readouterr().err
    assert str(tmp_path / "first") in err and kept.name in err, err

    # that backup is the first vault's: refused on the second, and never restored by default
    assert main(["backup", "restore", kept.stem, *second]) == ExitCode.FAILED
    assert "another vault" in capsys.readouterr().err
    assert default_restore(list_backups(tmp_path / "data" / "backups")) is None or \
        default_restore(list_backups(tmp_path / "data" / "backups")).kind is not BackupKind.OTHER_VAULT
    assert main(["backup", "restore", kept.stem, *first]) == 0


def test_an_app_left_open_on_the_first_vault_writes_nothing_after_a_switch(tmp_path, capsys):
    """The app open on one vault, a command on another with the same data dir: the app's next
    rating would land in the other vault's database."""
    first, second = _vaults(tmp_path)
    assert main(["rate", "topic/n1.md", "--rating", "good", "--now", NOW, *first]) == 0
    ctx = build_context(vault=str(tmp_path / "first"), data_dir=str(tmp_path / "data"), now=NOW)
    note = tmp_path / "first" / "topic" / "n2.md"
    before = note.read_bytes()
    with ReviewService(ctx) as open_app:
        assert main(["due", "--now", NOW, *second]) == 0
        with pytest.raises(UserError, match="another vault"):
            open_app.record_review("topic/n2.md", "good")
    assert note.read_bytes() == before


def test_a_moved_vault_keeps_its_history(tmp_path, capsys):
    first, _ = _vaults(tmp_path)
    assert main(["rate", "topic/n1.md", "--rating", "good", "--now", NOW, *first]) == 0
    (tmp_path / "first").rename(tmp_path / "moved")
    capsys.readouterr()
    moved = ["--data-dir", str(tmp_path / "data"), "--vault", str(tmp_path / "moved")]
    assert main(["undo", "--now", NOW, *moved]) == 0
    assert "another vault" not in capsys.readouterr().err
    assert not list((tmp_path / "data" / "backups").glob("other-vault-*"))


def test_a_vault_whose_marker_was_removed_keeps_its_history(tmp_path, capsys):
    first, _ = _vaults(tmp_path)
    assert main(["rate", "topic/n1.md", "--rating", "good", "--now", NOW, *first]) == 0
    (tmp_path / "first" / ".studyapp" / "vault.json").unlink()
    capsys.readouterr()
    assert main(["undo", "--now", NOW, *first]) == 0
    assert not list((tmp_path / "data" / "backups").glob("other-vault-*"))


def test_a_log_in_the_data_dir_refuses_another_vault(tmp_path, capsys):
    """With `history-log data-dir`, the log itself holds the first vault's reviews: nothing can
    start afresh, so the command stops and says what to do."""
    first, second = _vaults(tmp_path)
    assert main(["history-log", "data-dir", *first]) == 0
    assert main(["rate", "topic/n1.md", "--rating", "good", "--now", NOW, *first]) == 0
    note = tmp_path / "second" / "topic" / "n1.md"
    before = note.read_bytes()
    capsys.readouterr()

    code = main(["due", "--now", NOW, *second])
    err = capsys.readouterr().err

    assert code == ExitCode.FAILED, err
    assert "another vault" in err and "--data-dir" in err, err
    assert note.read_bytes() == before
    assert main(["due", "--now", NOW, *first]) == 0
