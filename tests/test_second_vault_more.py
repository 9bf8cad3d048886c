"""One data dir, two vaults, as users and a second process really use them: a vault copied with
`cp -r` (the same vault id), the log moved while the database serves the other vault, fitted
parameters, concurrent first commands, an app left open while a command runs on another vault."""

from __future__ import annotations

import shutil

import pytest
from test_second_vault import NOW, _vaults

from studyapp.cli import main
from studyapp.context import build_context
from studyapp.errors import ExitCode, UserError
from studyapp.reviews import ReviewService
from studyapp.store import Store

LATER = "2026-01-05T11:00"
FORGETFUL = (0.05, 0.3, 0.8, 3.0, 7.5, 0.6, 2.0, 0.01, 0.7, 0.2, 0.8, 2.0, 0.06, 0.3, 1.6,
             0.6, 1.9, 0.5, 0.1, 0.07, 0.3)


def _on(tmp_path, name):
    return ["--data-dir", str(tmp_path / "data"), "--vault", str(tmp_path / name)]


def _files(vault):
    """Every file of the vault but its marker, with its bytes."""
    return {p.relative_to(vault).as_posix(): p.read_bytes() for p in sorted(vault.rglob("*"))
            if p.is_file() and p.name != "vault.json"}


def _ctx(tmp_path, name, now=NOW):
    return build_context(vault=str(tmp_path / name), data_dir=str(tmp_path / "data"), now=now)


def test_a_copy_of_the_vault_gets_its_own_history_and_the_original_none_of_it(tmp_path, capsys):
    """`cp -r first copy` copies the vault's id: the copy was taken for the first vault moved,
    and a review made in the copy was written into the original's log and note on its next
    command (the cache held it, the original's log lacked it)."""
    first, _ = _vaults(tmp_path)
    assert main(["rate", "topic/n1.md", "--rating", "good", "--now", NOW, *first]) == 0
    shutil.copytree(tmp_path / "first", tmp_path / "copy")
    original = _files(tmp_path / "first")

    assert main(["rate", "topic/n2.md", "--rating", "easy", "--now", NOW,
                 *_on(tmp_path, "copy")]) == 0
    assert main(["due", "--now", LATER, *first]) == 0

    assert _files(tmp_path / "first") == original
    capsys.readouterr()
    assert main(["stats", "--json", "--now", LATER, *_on(tmp_path, "copy")]) == 0
    assert '"total_reviews": 2' in capsys.readouterr().out.replace("\n", " ").replace("  ", " ")
    assert b"review_count: 1" in (tmp_path / "copy" / "topic" / "n2.md").read_bytes()


def test_moving_the_log_of_a_vault_the_database_does_not_serve(tmp_path, capsys):
    """`history-log data-dir` run on the first vault while the database served the second: the
    second vault's next command replayed the first vault's reviews into its notes."""
    first, second = _vaults(tmp_path)
    assert main(["rate", "topic/n1.md", "--rating", "good", "--now", NOW, *first]) == 0
    assert main(["rate", "topic/n2.md", "--rating", "easy", "--now", NOW, *second]) == 0
    notes = _files(tmp_path / "second")

    code = main(["history-log", "data-dir", *first])
    main(["due", "--now", LATER, *second])

    assert {k: v for k, v in _files(tmp_path / "second").items() if k.endswith(".md")} == \
        {k: v for k, v in notes.items() if k.endswith(".md")}
    if code == 0:  # moved: the database serves the first vault now, and the second is refused
        assert main(["due", "--now", LATER, *first]) == 0
        assert main(["due", "--now", LATER, *second]) == ExitCode.FAILED


def test_the_first_command_on_a_vault_does_not_schedule_with_anothers_fitted_parameters(
        tmp_path, capsys):
    """The scheduler was built from the database before it was given to the new vault: with an
    empty log there, the first review used the other vault's fitted parameters (3 days for an
    easy new note instead of the defaults' 8)."""
    from studyapp.optimize import FitResult, keep_fit

    first, second = _vaults(tmp_path)
    assert main(["rate", "topic/n1.md", "--rating", "good", "--now", NOW, *first]) == 0
    ctx = _ctx(tmp_path, "first")
    with ReviewService(ctx) as service:
        keep_fit(ctx, service.store, FitResult(list(FORGETFUL), 0.5, 0.4, 100))
    capsys.readouterr()

    assert main(["rate", "topic/n2.md", "--rating", "easy", "--now", LATER, *second]) == 0
    out = capsys.readouterr().out

    assert "(in 8d)" in out, out


def test_a_database_given_to_another_vault_while_one_reviews(tmp_path, capsys, monkeypatch):
    """The database served the second vault, with no history yet. A command on the first
    checked that (no lock held) and then gave it to the first vault: a review the second
    vault's `rate` recorded in between was kept, and adopted into the first vault's log."""
    first, second = _vaults(tmp_path)
    assert main(["due", "--now", NOW, *second]) == 0  # served, nothing recorded
    from studyapp import locking

    original = Store.holds_history
    raced: list[int] = []

    def another_process_writes_meanwhile(store):
        found = original(store)
        if not raced and not any(lock.depth for lock in locking._locks.values()):  # one could write now
            raced.append(main(["rate", "topic/n2.md", "--rating", "easy", "--now", NOW, *second]))
        return found

    monkeypatch.setattr(Store, "holds_history", another_process_writes_meanwhile)
    first_log = tmp_path / "first" / ".studyapp" / "log"

    main(["due", "--now", NOW, *first])

    monkeypatch.undo()
    assert not any(first_log.glob("*.jsonl")) or all(
        b"topic/n2.md" not in p.read_bytes() for p in first_log.glob("*.jsonl"))
    assert b"review_count: 0" in (tmp_path / "first" / "topic" / "n2.md").read_bytes()


def test_switching_back_and_forth_keeps_as_many_backups_as_automatic_ones(tmp_path, capsys):
    """Each switch kept a full copy of the database, never rotated: a learner going between
    the starter deck and their notes every day filled the data dir. The newest are kept."""
    from studyapp.backups import BACKUPS_KEPT, inspect_database, list_backups
    from studyapp.vault_binding import bound_in_file

    first, second = _vaults(tmp_path)
    rounds = BACKUPS_KEPT // 2 + 2
    for n in range(rounds):
        now = f"2026-01-05T10:{n:02d}"
        assert main(["rate", "topic/n1.md", "--rating", "good", "--now", now, *first]) == 0
        assert main(["rate", "topic/n2.md", "--rating", "good", "--now", now, *second]) == 0
    kept = [b.path for b in list_backups(tmp_path / "data" / "backups")
            if b.kind.value == "other-vault"]

    assert len(kept) == BACKUPS_KEPT, kept
    newest: dict[str, int] = {}  # each vault's newest copy holds the most reviews
    for path in kept:
        served = bound_in_file(path).path
        newest[served] = max(newest.get(served, 0), inspect_database(path).reviews)
    assert newest == {str((tmp_path / "first").resolve()): rounds,
                      str((tmp_path / "second").resolve()): rounds - 1}


def test_an_app_left_open_says_the_database_serves_another_vault_on_undo(tmp_path, capsys):
    """Its `u` after a command on the second vault said every review was another device's (the
    choice read the other vault's rows before the lock's check)."""
    from studyapp.drill_reviews import undo_newest_review

    first, second = _vaults(tmp_path)
    assert main(["rate", "topic/n1.md", "--rating", "good", "--now", NOW, *first]) == 0
    before = _files(tmp_path / "first")
    with ReviewService(_ctx(tmp_path, "first", LATER)) as open_app:
        assert main(["rate", "topic/n2.md", "--rating", "good", "--now", NOW, *second]) == 0
        with pytest.raises(UserError, match="another vault"):
            undo_newest_review(open_app)
    assert _files(tmp_path / "first") == before


def test_the_app_open_on_the_first_vault_writes_nothing_after_a_switch(tmp_path, capsys):
    """The facade the TUI uses: rating, undo and suspend after a command on the second vault
    each say so (a UserError the app shows), and write nothing."""
    from fsrs import Rating

    from studyapp.facade import StudyFacade

    first, second = _vaults(tmp_path)
    assert main(["rate", "topic/n1.md", "--rating", "good", "--now", NOW, *first]) == 0
    study = StudyFacade(_ctx(tmp_path, "first", LATER))
    try:
        study.load()
        study.begin_review()
        before = _files(tmp_path / "first")
        assert main(["rate", "topic/n2.md", "--rating", "good", "--now", NOW, *second]) == 0
        for act in (lambda: study.rate("topic/n2.md", int(Rating.Good)), study.undo,
                    lambda: study.suspend("topic/n2.md")):
            with pytest.raises(UserError, match="another vault"):
                act()
        assert _files(tmp_path / "first") == before
    finally:
        study.close()


def test_a_database_migrated_by_another_process_meanwhile(tmp_path, monkeypatch):
    """Two first commands at once (one on each vault): both read schema 0, one migrated, and
    the other failed with "duplicate column name: event_id"."""
    database = tmp_path / "data" / "studyapp.sqlite3"
    Store(database).close()  # the other process, done first
    reads: list[int] = []
    original = Store.schema_version

    def read_before_the_other_migrated(store):
        reads.append(1)
        return 0 if len(reads) == 1 else original.fget(store)

    monkeypatch.setattr(Store, "schema_version", property(read_before_the_other_migrated))
    Store(database).close()


def test_a_rebuild_writes_nothing_into_another_vaults_database(tmp_path, capsys, monkeypatch):
    """`rebuild` wrote its cards without the writer lock: a command on the second vault giving
    the database to that vault meanwhile got the first vault's cards for its notes of the
    same names (its next review of one started from it)."""
    first, second = _vaults(tmp_path)
    assert main(["rate", "topic/n2.md", "--rating", "good", "--now", NOW, *second]) == 0
    note = tmp_path / "first" / "topic" / "n1.md"
    note.write_bytes(note.read_bytes().replace(b"review_count: 0", b"review_count: 3")
                     .replace(b"last_reviewed: null", b"last_reviewed: '2026-01-02'"))
    assert main(["due", "--now", NOW, *first]) == 0
    from studyapp import locking

    original = ReviewService.load
    raced: list[int] = []

    def another_vaults_command_meanwhile(service):
        snapshot = original(service)
        if not raced and not any(lock.depth for lock in locking._locks.values()):
            raced.append(main(["due", "--now", NOW, *second]))
        return snapshot

    monkeypatch.setattr(ReviewService, "load", another_vaults_command_meanwhile)
    main(["rebuild", "--now", NOW, *first])
    monkeypatch.undo()

    import sqlite3

    with sqlite3.connect(tmp_path / "data" / "studyapp.sqlite3") as conn:
        served = conn.execute("SELECT path FROM vault").fetchone()[0]
        cards = conn.execute("SELECT n.path FROM cards c JOIN notes n ON n.key = c.note_key"
                             " WHERE n.deleted = 0").fetchall()
    if served == str((tmp_path / "second").resolve()):  # given away meanwhile: none of it there
        assert cards == [("topic/n2.md",)], cards
    else:  # the switch waited for the rebuild
        assert ("topic/n1.md",) in cards


def test_backup_restore_without_a_name_brings_back_this_vaults_newest(tmp_path, capsys):
    """After the second vault's backup, `backup restore` on the first picked that one (the
    newest) and refused it as another vault's, though the first vault's own was there."""
    first, second = _vaults(tmp_path)
    assert main(["rate", "topic/n1.md", "--rating", "good", "--now", NOW, *first]) == 0
    assert main(["backup", "create", *first]) == 0
    assert main(["rate", "topic/n2.md", "--rating", "good", "--now", NOW, *second]) == 0
    assert main(["backup", "create", *second]) == 0
    capsys.readouterr()

    code = main(["backup", "restore", *first])
    out, err = capsys.readouterr()

    assert code == 0, err
    assert main(["stats", "--json", "--now", LATER, *first]) == 0
    assert '"total_reviews": 1' in capsys.readouterr().out


def test_a_lost_history_is_still_told_after_the_database_was_given_to_this_vault(
        tmp_path, capsys):
    """The database and the log of the first vault lost, another vault's database copied in
    its place: the first command said the history was lost, then kept that database as a
    backup and started afresh, and the loss was never told again (the switch accepted the
    fresh database as the data dir's whole history)."""
    first, second = _vaults(tmp_path)
    assert main(["rate", "topic/n1.md", "--rating", "good", "--now", NOW, *first]) == 0
    assert main(["due", "--now", LATER, *first]) == 0
    elsewhere = ["--data-dir", str(tmp_path / "elsewhere"), "--vault", str(tmp_path / "second")]
    assert main(["rate", "topic/n2.md", "--rating", "good", "--now", NOW, *elsewhere]) == 0
    for name in ("studyapp.sqlite3", "studyapp.sqlite3-wal", "studyapp.sqlite3-shm"):
        (tmp_path / "data" / name).unlink(missing_ok=True)
    shutil.rmtree(tmp_path / "first" / ".studyapp" / "log")
    shutil.copy(tmp_path / "elsewhere" / "studyapp.sqlite3", tmp_path / "data" / "studyapp.sqlite3")

    for _ in range(2):  # told every time, until the user restores or rebuilds
        capsys.readouterr()
        assert main(["due", "--now", LATER, *first]) == 0
        err = capsys.readouterr().err
        assert "review history" in err and "1 reviews" in err, err


def test_the_apps_poll_says_once_that_the_database_serves_another_vault(tmp_path, capsys):
    """The app's poll of the log (every few seconds) failed in its worker after a command on the
    second vault: nothing was said until the learner rated, and it failed again each poll."""
    from studyapp.facade import StudyFacade

    first, second = _vaults(tmp_path)
    assert main(["rate", "topic/n1.md", "--rating", "good", "--now", NOW, *first]) == 0
    study = StudyFacade(_ctx(tmp_path, "first", LATER))
    try:
        study.load()
        assert main(["rate", "topic/n2.md", "--rating", "good", "--now", NOW, *second]) == 0

        taken = study.take_other_devices_reviews()

        assert taken is not None and taken.reviews == 0, taken
        assert len(taken.problems) == 1 and "another vault" in taken.problems[0]
        assert study.take_other_devices_reviews() is None  # said once
    finally:
        study.close()


def test_the_lost_history_line_offers_this_vaults_backup_not_anothers(tmp_path):
    """It named the newest backup of any vault, which `backup restore` then refuses."""
    from datetime import datetime, timezone

    from studyapp.backups import list_backups
    from studyapp.history_guard import lost_history_line
    from studyapp.markers import LossReason, LostHistory, VaultMarker, write_marker
    from studyapp.paths import Paths
    from studyapp.store import Store, VaultBinding

    paths = Paths(tmp_path / "data", tmp_path / "vault", False)
    paths.vault_dir.mkdir(parents=True)
    write_marker(paths.vault_marker, VaultMarker("this-vault"))
    paths.backups_dir.mkdir(parents=True)
    for name, vault_id in (("manual-20260101-000000", "this-vault"),
                           ("manual-20260301-000000", "another-vault")):
        with Store(paths.backups_dir / f"{name}.sqlite3") as store:
            store.bind_vault(VaultBinding(vault_id, f"/somewhere/{vault_id}"))
    lost = LostHistory(LossReason.MISSING, 5, datetime(2026, 1, 1, tzinfo=timezone.utc).isoformat(),
                       datetime(2026, 4, 1, tzinfo=timezone.utc).isoformat())
    line = lost_history_line(paths, lost, list_backups(paths.backups_dir))
    assert "manual-20260101-000000" in line and "manual-20260301" not in line, line
