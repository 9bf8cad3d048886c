"""`backup restore` of a file in the backups folder that is an SQLite database, but not one of
studyapp's (an Anki collection a user kept beside the backups, another program's database):
it is reported as "0 reviews of 0 notes", restored over the working database, and from then on
every command fails with "cannot use the review database ... table notes already exists"."""

from __future__ import annotations

import json
import sqlite3

from history_helpers import make_vault

from studyapp.cli import main

NOW = "2026-11-20T10:00"


def test_restoring_another_programs_sqlite_file_leaves_the_data_dir_usable(tmp_path, capsys):
    vault, data = make_vault(tmp_path / "vault"), tmp_path / "data"
    common = ["--vault", str(vault), "--data-dir", str(data), "--now", NOW]
    assert main(["rate", "b.md", "--rating", "good", *common]) == 0
    assert main(["backup", "create", *common]) == 0
    # an Anki collection (its own `notes`, `cards`, `revlog` tables) named like a backup
    foreign = data / "backups" / "manual-20250101-000000.sqlite3"
    with sqlite3.connect(foreign) as conn:
        conn.executescript(
            "CREATE TABLE col (id integer primary key, crt integer, ver integer);"
            "CREATE TABLE notes (id integer primary key, guid text, tags text, flds text);"
            "CREATE TABLE cards (id integer primary key, nid integer, ord integer);"
            "CREATE TABLE revlog (id integer primary key, cid integer, ease integer);"
            "INSERT INTO notes VALUES (1, 'g', '', 'front');")
    conn.close()
    note = vault / "b.md"
    before = note.read_bytes()
    capsys.readouterr()

    restore = main(["backup", "restore", "manual-20250101-000000", *common])
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err

    # whatever the restore said, the data dir must still work and keep the review
    code = main(["stats", "--json", *common])
    out, err = capsys.readouterr()
    assert code == 0, f"restore exit {restore}; then stats: {err.strip()}"
    assert json.loads(out)["total_reviews"] == 1
    assert main(["due", *common]) == 0, capsys.readouterr().err
    assert note.read_bytes() == before


def test_another_programs_database_in_place_of_the_review_database_is_named_and_kept_by_a_rebuild(tmp_path, capsys):
    vault, data = make_vault(tmp_path / "vault"), tmp_path / "data"
    common = ["--vault", str(vault), "--data-dir", str(data), "--now", NOW]
    data.mkdir()
    database = data / "studyapp.sqlite3"
    with sqlite3.connect(database) as conn:  # an Anki collection copied in under the database's name
        conn.executescript("CREATE TABLE col (id integer primary key);"
                           "CREATE TABLE notes (id integer primary key, flds text);")
    conn.close()
    foreign = database.read_bytes()

    assert main(["due", *common]) == 1
    err = capsys.readouterr().err
    assert "is not a studyapp database" in err and "col, notes" in err, err
    assert "already exists" not in err and "Traceback" not in err
    assert database.read_bytes() == foreign  # refused, left as it was

    assert main(["rebuild", *common]) == 0, capsys.readouterr().err
    kept = [path for path in (data / "backups").glob("damaged-*.sqlite3")]
    assert [path.read_bytes() for path in kept] == [foreign]
    assert main(["due", *common]) == 0, capsys.readouterr().err
