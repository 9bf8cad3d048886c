"""`backup restore` of a backup taken from another vault's data dir: its reviews were written
into this vault's log and notes for good (restoring the before-restore copy undid nothing)."""

from __future__ import annotations

import shutil

from vault_fixtures import USERS_NOTE, write

from studyapp.cli import main
from studyapp.errors import ExitCode


def test_a_backup_of_another_vaults_history_is_not_restored(tmp_path, capsys):
    common = {}
    for name in ("a", "b"):
        vault = tmp_path / name / "vault"
        for note in ("n1.md", "n2.md"):
            write(vault / "topic" / note, USERS_NOTE)
        common[name] = ["--vault", str(vault), "--data-dir", str(tmp_path / name / "data")]
    assert main(["rate", "topic/n1.md", "--rating", "easy", "--now", "2026-01-01T10:00", *common["a"]]) == 0
    assert main(["backup", "create", *common["a"]]) == 0
    assert main(["rate", "topic/n2.md", "--rating", "good", "--now", "2026-01-03T10:00", *common["b"]]) == 0
    (copied,) = (tmp_path / "a" / "data" / "backups").glob("manual-*.sqlite3")
    (tmp_path / "b" / "data" / "backups").mkdir(exist_ok=True)
    shutil.copy(copied, tmp_path / "b" / "data" / "backups" / "manual-20250101-000000.sqlite3")
    note = tmp_path / "b" / "vault" / "topic" / "n1.md"
    before = note.read_bytes()
    logs = {p.name: p.read_bytes() for p in (tmp_path / "b" / "vault" / ".studyapp" / "log").glob("*")}
    capsys.readouterr()

    code = main(["backup", "restore", "manual-20250101-000000", *common["b"]])
    err = capsys.readouterr().err
    assert code == ExitCode.FAILED and "another vault" in err, err
    main(["due", "--now", "2026-01-04T10:00", *common["b"]])
    assert note.read_bytes() == before
    assert {p.name: p.read_bytes() for p in (tmp_path / "b" / "vault" / ".studyapp" / "log").glob("*")} == logs
