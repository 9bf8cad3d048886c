"""Which vault a data dir's review database serves.

The database is this data dir's cache of one vault's history. Pointed at another vault (the
README's own path: the starter deck first, then your notes), it handed the first vault's reviews
to the second: they looked like reviews the new vault's log lacked, so they were written into
that log and into its notes of the same names. So the database records the id of the vault it
serves (`<vault>/.studyapp/vault.json`, see `markers`), and opening it on another vault:

- with the review log in the vault (the default) keeps the database as an `other-vault` backup
  and starts afresh: the new vault's history is replayed from its own log, and going back does
  the same the other way, so each vault finds its history where it always is;
- with the log in the data dir stops with what to do: that log holds the other vault's reviews,
  and nothing here could tell them apart.

A copy of a vault (`cp -r`) carries its id: it is given one of its own while the original is
still in its place. The database changes vaults only under the writer lock.
"""

from __future__ import annotations

import os
from datetime import datetime, timezone
from pathlib import Path

from studyapp.errors import UserError
from studyapp.markers import VaultMarker, create_marker, read_vault_marker, write_marker
from studyapp.store import Store, VaultBinding


def this_vault(paths, bound: VaultBinding | None) -> VaultBinding | None:
    """The vault `paths` names, with its id: from its marker, else a new marker written now
    (the id of `bound` where the vault is the one at `bound`'s place: its marker was removed;
    a new id for a copy of `bound`'s vault, `is_a_copy`). None when the vault folder does not
    exist (nothing is created for it)."""
    vault = paths.vault_dir
    if not vault.is_dir():
        return None
    where = str(vault.resolve())
    marker = read_vault_marker(paths.vault_marker)
    if marker is not None and bound is not None and is_a_copy(marker, bound, where):
        import uuid

        marker = VaultMarker(uuid.uuid4().hex, marker.owner)  # written below: the copy's own id
    elif marker is not None:
        return VaultBinding(marker.vault_id, where)
    else:  # made only if absent: commands started at once on a new vault agree on its id
        marker, written = create_marker(paths.vault_marker, marker_or_new(paths, bound), read_vault_marker)
        return VaultBinding(marker.vault_id if written else f"path:{where}", where)
    if not write_marker(paths.vault_marker, marker):
        return VaultBinding(f"path:{where}", where)  # a read-only vault: its place is its id
    return VaultBinding(marker.vault_id, where)


def is_a_copy(marker: VaultMarker, bound: VaultBinding, where: str) -> bool:
    """Whether the vault at `where` carries the id of the vault the database serves while that
    vault is still at its own place: a copy (`cp -r`), not that vault moved. Taken for the
    same vault, the copy's reviews were in the cache but not in the original's log when the
    original was opened again, so they were written into it and into its notes."""
    if marker.vault_id != bound.id or bound.path == where:
        return False
    try:
        if os.path.samefile(bound.path, where):  # one folder under two names (a bind mount)
            return False
    except OSError:
        return False  # nothing at the old place: the vault was moved
    there = read_vault_marker(Path(bound.path) / ".studyapp" / "vault.json")
    return there is not None and there.vault_id == bound.id


def marker_or_new(paths, bound: VaultBinding | None = None) -> VaultMarker:
    """The vault's marker, else a new one: with the id of the vault the database serves when
    that vault was at this place (its marker was removed, not another vault put there)."""
    marker = read_vault_marker(paths.vault_marker)
    if marker is not None:
        return marker
    if bound is None:
        bound = bound_in_file(paths.database_file)
    where = str(paths.vault_dir.resolve())
    if bound is not None and bound.path == where:
        return VaultMarker(bound.id)
    import uuid  # imported when a vault is new: `platform` comes with it, which `due` need not pay for

    return VaultMarker(uuid.uuid4().hex)


def doctor_line(paths, settings) -> str | None:
    """`doctor`'s line when the database serves another vault than this one (changes nothing)."""
    bound = bound_in_file(paths.database_file)
    if bound is None or not paths.vault_dir.is_dir():
        return None
    marker = read_vault_marker(paths.vault_marker)
    here = str(paths.vault_dir.resolve())
    if ((bound.id == marker.vault_id and not is_a_copy(marker, bound, here))
            if marker is not None else bound.path == here):
        return None
    if settings.history_log == "data-dir":
        return (f"database   serves another vault ({bound.path}) whose review log is in the data "
                "dir: commands on this vault stop until it has a data dir of its own")
    return (f"database   serves another vault ({bound.path}): the next command keeps it as a "
            "backup and reads this vault's history from its own log")


def bound_in_file(database_file) -> VaultBinding | None:
    """`Store.bound_vault` without opening (or creating, or migrating) the database."""
    import sqlite3
    from urllib.parse import quote

    if not database_file.exists():
        return None
    try:
        conn = sqlite3.connect(f"file:{quote(str(database_file))}?mode=ro", uri=True)
        try:
            row = conn.execute("SELECT id, path FROM vault").fetchone()
        finally:
            conn.close()
    except sqlite3.Error:  # no such table yet, or a database the command itself will report
        return None
    return None if row is None else VaultBinding(row[0], row[1])


def serve_this_vault(ctx, store: Store, lock) -> tuple[VaultBinding | None, list[str]]:
    """Make `store` the database of `ctx`'s vault before anything reads or writes it; returns
    the vault and what to tell the user. UserError when it cannot (see the module's doc)."""
    bound = store.bound_vault()
    here = this_vault(ctx.paths, bound)
    if here is None or bound == here:
        return here, []
    # under the lock: another vault's command may record a review between a look at the
    # database and its binding, which then served this vault with that review in it
    with lock.hold():
        bound = store.bound_vault()
        if bound is None or bound.id == here.id:
            store.bind_vault(here)  # a new database, an older studyapp's, a moved vault
            return here, []
        if ctx.settings.history_log == "data-dir" and (store.holds_history()
                                                       or _data_dir_log_has_events(ctx.paths)):
            # an empty cache too: its vault's log was just moved into the data dir
            raise UserError(
                f"this data dir ({ctx.paths.data_dir}) keeps the review history of another vault "
                f"({bound.path}), and its review log is in the data dir, so that vault's reviews "
                f"cannot be told from this one's. Give this vault its own data dir (`--data-dir "
                f"DIR` or STUDYAPP_DATA_DIR), or keep the log in the vaults (`studyapp --vault "
                f"{bound.path} history-log vault`); nothing was changed")
        if not store.holds_history():
            store.bind_vault(here)  # an empty one serves any vault as it is
            return here, []
        if store.journal():
            raise UserError(
                f"a review of the vault {bound.path} was interrupted and is not finished yet; run "
                f"any command on it first (`studyapp --vault {bound.path} due`); nothing was changed")
        kept = _keep(ctx.paths)
        store.start_afresh(here)
    from studyapp.history_guard import accept_current_database

    accept_current_database(ctx.paths, keep_loss=True)
    return here, [f"this data dir's review database held the history of another vault "
                  f"({bound.path}); it is kept as the backup {kept} and this vault's history is "
                  "read from its own review log (going back to that vault reads its log again)"]


def _data_dir_log_has_events(paths) -> bool:
    from studyapp.history.eventlog import EventLog, data_dir_log

    return EventLog(data_dir_log(paths), "").has_events()


class ServedElsewhere(UserError):
    """The database was given to another vault since this process opened it."""


def check_still_served(store: Store, here: VaultBinding | None) -> None:
    """Under the writer lock, before a write: another process may have given the database to
    another vault since this one opened it (an app left open on one vault, a command on
    another)."""
    if here is None:
        return
    bound = store.bound_vault()
    if bound is not None and bound.id != here.id:
        raise ServedElsewhere(f"the review database now serves another vault ({bound.path}): "
                              f"a studyapp command used this data dir with it meanwhile. Nothing "
                              f"was written; open {here.path} again to go on")


def _keep(paths) -> str:
    """Keep the database as an `other-vault` backup; the newest `BACKUPS_KEPT` are kept, as
    automatic ones are: each switch copied the whole database, and a learner going between
    two vaults every day filled the data dir (each vault's log still holds its history)."""
    from studyapp.backups import BACKUPS_KEPT, BackupKind, list_backups, take_backup

    kept = take_backup(paths.database_file, paths.backups_dir, datetime.now(timezone.utc),
                       BackupKind.OTHER_VAULT)
    older = [b.path for b in list_backups(paths.backups_dir) if b.kind is BackupKind.OTHER_VAULT]
    older.sort(key=_written_at, reverse=True)  # not by name: a name freed within the second is reused
    for path in older[BACKUPS_KEPT:]:
        if path != kept.path:
            path.unlink(missing_ok=True)
    return kept.name


def _written_at(path: Path) -> int:
    try:
        return path.stat().st_mtime_ns
    except OSError:
        return 0
