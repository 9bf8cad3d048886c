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
"""

from __future__ import annotations

from datetime import datetime, timezone

from studyapp.errors import UserError
from studyapp.markers import VaultMarker, read_vault_marker, write_marker
from studyapp.store import Store, VaultBinding


def this_vault(paths, bound: VaultBinding | None) -> VaultBinding | None:
    """The vault `paths` names, with its id: from its marker, else a new marker written now
    (the id of `bound` where the vault is the one at `bound`'s place: its marker was removed).
    None when the vault folder does not exist (nothing is created for it)."""
    vault = paths.vault_dir
    if not vault.is_dir():
        return None
    where = str(vault.resolve())
    marker = read_vault_marker(paths.vault_marker)
    if marker is None:
        marker = marker_or_new(paths, bound)
        if not write_marker(paths.vault_marker, marker):
            return VaultBinding(f"path:{where}", where)  # a read-only vault: its place is its id
    return VaultBinding(marker.vault_id, where)


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
    if (bound.id == marker.vault_id) if marker is not None else bound.path == here:
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
    if bound is None or bound.id == here.id or not store.holds_history():
        store.bind_vault(here)  # a new database, an older studyapp's, a moved vault, an empty one
        return here, []
    if ctx.settings.history_log == "data-dir":
        raise UserError(
            f"this data dir ({ctx.paths.data_dir}) keeps the review history of another vault "
            f"({bound.path}), and its review log is in the data dir, so that vault's reviews "
            f"cannot be told from this one's. Give this vault its own data dir (`--data-dir DIR` "
            f"or STUDYAPP_DATA_DIR), or keep the log in the vaults (`studyapp --vault "
            f"{bound.path} history-log vault`); nothing was changed")
    with lock.hold():
        bound = store.bound_vault()
        if bound is None or bound.id == here.id:
            store.bind_vault(here)
            return here, []
        if store.journal():
            raise UserError(
                f"a review of the vault {bound.path} was interrupted and is not finished yet; run "
                f"any command on it first (`studyapp --vault {bound.path} due`); nothing was changed")
        kept = _keep(ctx.paths)
        store.start_afresh(here)
    from studyapp.history_guard import accept_current_database

    accept_current_database(ctx.paths)
    return here, [f"this data dir's review database held the history of another vault "
                  f"({bound.path}); it is kept as the backup {kept} and this vault's history is "
                  "read from its own review log (going back to that vault reads its log again)"]


def check_still_served(store: Store, here: VaultBinding | None) -> None:
    """Under the writer lock, before a write: another process may have given the database to
    another vault since this one opened it (an app left open on one vault, a command on
    another)."""
    if here is None:
        return
    bound = store.bound_vault()
    if bound is not None and bound.id != here.id:
        raise UserError(f"the review database now serves another vault ({bound.path}): a "
                        f"studyapp command used this data dir with it meanwhile. Nothing was "
                        f"written; open {here.path} again to go on")


def _keep(paths) -> str:
    from studyapp.backups import BackupKind, take_backup

    return take_backup(paths.database_file, paths.backups_dir, datetime.now(timezone.utc),
                       BackupKind.OTHER_VAULT).name
