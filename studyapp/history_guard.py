"""Is the review history still here, and is this the data dir that keeps it?

Run when a command or the app opens (and again after a command), this compares the database
with what `<data dir>/data-dir.json` remembers and with the owner the vault's
`.studyapp/vault.json` names (see `markers`). It tells apart:

- a first run (no marker yet, or a vault the old tool reviewed): nothing to say;
- a lost history: the data dir had a database with reviews, and now the file is missing, empty
  or another database. Said on every run until the user restores a backup or rebuilds from the
  notes; no automatic backup is taken meanwhile, so the good ones are not rotated away;
- a second data dir on the vault: the vault names another data dir as the one that records its
  reviews (undo in one could revert a review made in the other);
- with a review log (`studyapp.history`), the database is a cache: a missing, empty or
  replaced one is rebuilt from the log, not lost, and several data dirs (devices) on one vault
  is the supported case, each appending to its own log file.
- a database that cannot be used (damaged, newer, read-only): the command itself reports it.

While healthy, it takes the automatic backups (`backups.take_backup_if_due`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timezone
from enum import Enum

from studyapp import backups
from studyapp.backups import (
    Backup,
    DatabaseSummary,
    default_restore,
    inspect_database,
    list_backups,
)
from studyapp.markers import (
    DataDirMarker,
    KnownHistory,
    LossReason,
    LostHistory,
    VaultMarker,
    VaultOwner,
    create_marker,
    read_data_dir_marker,
    read_vault_marker,
    same_marker,
    this_host,
    write_marker,
)
from studyapp.paths import Paths
from studyapp.store import StoreError


class DatabaseState(Enum):
    """What `doctor` prints after `database`."""

    NONE = "none yet"
    OK = "ok"
    LOST = "lost"
    UNUSABLE = "unusable"


class Ownership(Enum):
    """Whose reviews the vault's marker says it holds."""

    UNCLAIMED = "unclaimed"
    OURS = "ours"
    OTHER = "other"
    UNKNOWN = "unknown"
    """This data dir has no identity yet (its marker could not be written)."""
    SHARED = "shared"
    """Other data dirs (devices) record the vault's reviews too, each in its own log file."""


@dataclass(frozen=True)
class Notice:
    """One line to tell the user as a command or the app opens."""

    text: str
    warning: bool = True
    """True: the history is at risk (lost, shared, unbacked): a CLI warning, and a TUI
    notification that stays until read. False: information said once (a CLI note, a short toast)."""


@dataclass
class HistoryReport:
    """The state of the review history for one data dir and vault."""

    paths: Paths
    state: DatabaseState
    summary: DatabaseSummary | None
    lost: LostHistory | None
    problem: StoreError | None
    ownership: Ownership
    owner: VaultOwner | None
    backups: list[Backup] = field(default_factory=list)
    backup_taken: Backup | None = None
    backup_failed: str | None = None
    others_log_in_vault: bool = False
    """Other devices record into the vault's log, and this one keeps its log in its data dir."""
    owner_logs_apart: bool = False
    """This data dir claimed the vault but keeps its log in itself, while other devices record
    into the vault's log: its reviews reach none of them."""

    def notices(self) -> list[str]:
        """What the user must be told now: one line each (a CLI warning, a TUI notification)."""
        lines = []
        if self.state is DatabaseState.LOST and self.lost is not None:
            lines.append(lost_history_line(self.paths, self.lost, self.backups))
        if self.ownership is Ownership.OTHER and self.owner is not None:
            lines.append(other_owner_line(self.paths, self.owner, self.others_log_in_vault))
        if self.owner_logs_apart:
            lines.append(owner_logs_apart_line(self.paths))
        if self.backup_failed:
            lines.append(f"could not back up the review database: {self.backup_failed}")
        return lines


def doctor_lines(report: HistoryReport) -> list[str]:
    """`studyapp doctor`'s database, backups and owner lines."""
    paths = report.paths
    if report.state is DatabaseState.OK and report.summary is not None:
        s = report.summary
        database = f"ok: {s.reviews} reviews, schema {s.schema} ({paths.database_file})"
    elif report.state is DatabaseState.LOST and report.lost is not None:
        database = "lost: " + lost_history_line(paths, report.lost, report.backups)
    elif report.state is DatabaseState.UNUSABLE and report.problem is not None:
        database = f"unusable: {report.problem}"
    else:
        database = f"none yet ({paths.database_file})"
    if report.backups:
        newest = report.backups[0]
        backups = (f"{len(report.backups)} in {paths.backups_dir}, newest {newest.name} "
                   f"({newest.taken_at.astimezone():%Y-%m-%d %H:%M})")
    else:
        backups = f"none yet (taken automatically into {paths.backups_dir})"
    owner = {
        Ownership.OURS: "this data dir records the vault's reviews",
        Ownership.UNCLAIMED: "not recorded yet (claimed with the first review)",
        Ownership.UNKNOWN: "unknown (this data dir has no id yet)",
        Ownership.SHARED: ("shared: each device records its reviews in its own log file "
                           "(the database is rebuilt from them)"),
    }.get(report.ownership)
    if owner is None and report.owner is not None:
        owner = other_owner_line(paths, report.owner, report.others_log_in_vault)
    if report.owner_logs_apart:
        owner = f"{owner}; but {owner_logs_apart_line(paths)}"
    return [f"database   {database}", f"backups    {backups}", f"owner      {owner}"]


def review_log_line(paths: Paths, settings) -> str:
    """`studyapp doctor`'s review log line: its folder, its events, and what a replay leaves
    out (lines no event this studyapp can use, names that are no regular file), which a
    command says only once, when it replays."""
    from studyapp.history.eventlog import EventLog, log_dir

    folder = log_dir(paths, settings)
    try:
        contents = EventLog(folder, "").read()
    except OSError as exc:
        return f"review log cannot be read ({folder}): {exc.strerror or exc}"
    if not contents.sizes and not contents.not_files:
        return f"review log none yet ({folder})"
    files = len(contents.sizes)
    line = (f"review log {len(contents.events)} events in {files} device "
            f"file{'' if files == 1 else 's'} ({folder})")
    if contents.skipped:
        plural = "" if contents.skipped == 1 else "s"
        line += (f"; {contents.skipped} line{plural} left out, as no event this studyapp can "
                 f"use (the first: {contents.first_skipped})")
    if contents.not_files:
        line += f"; not regular files, left out: {', '.join(sorted(contents.not_files))}"
    return line


def notes_ahead_line(paths: Paths, notes) -> str | None:
    """`doctor`'s line for notes that record reviews the database lacks, if any."""
    from studyapp.rebuild import notes_ahead_of_database

    ahead = notes_ahead_of_database(paths.database_file, notes)
    if not ahead:
        return None
    shown = ", ".join(ahead[:3]) + (", ..." if len(ahead) > 3 else "")
    count = "1 note records" if len(ahead) == 1 else f"{len(ahead)} notes record"
    return (f"history    {count} a review the database lacks ({shown}): it holds an older "
            "state; `studyapp rebuild` brings their cards up to their review keys")


def needs_attention(report: HistoryReport) -> bool:
    """Whether `doctor` should fail: the history is lost, unusable, or kept elsewhere."""
    return (report.state in (DatabaseState.LOST, DatabaseState.UNUSABLE)
            or report.ownership is Ownership.OTHER or report.owner_logs_apart)


def lost_history_line(paths: Paths, lost: LostHistory, found: list[Backup]) -> str:
    what = {
        LossReason.MISSING: "is gone",
        LossReason.EMPTY: "is empty",
        LossReason.REPLACED: "was replaced by another database",
    }[lost.reason]
    seen = datetime.fromisoformat(lost.seen_at).astimezone()
    line = (f"the review history in {paths.database_file} {what} (it had {lost.reviews_before} "
            f"reviews on {seen:%Y-%m-%d %H:%M}); the notes still carry their review dates. ")
    candidate = default_restore(_of_this_vault(paths, found))
    if candidate is not None:
        line += (f"`studyapp backup restore` brings back {candidate.name} (taken "
                 f"{candidate.taken_at.astimezone():%Y-%m-%d %H:%M}; `studyapp backup list` "
                 "shows all); `studyapp rebuild` instead takes each card's state from its "
                 "note's review keys")
    else:
        line += ("There is no backup: `studyapp rebuild` takes each card's state from its "
                 "note's review keys (`studyapp backup restore` needs a backup)")
    return line


def _of_this_vault(paths: Paths, found: list[Backup]) -> list[Backup]:
    """The backups `backup restore` would restore here: not those of a database that served
    another vault (`vault_binding`), which it refuses."""
    from studyapp.vault_binding import bound_in_file

    marker = read_vault_marker(paths.vault_marker)
    if marker is None:
        return found
    return [b for b in found
            if (served := bound_in_file(b.path)) is None or served.id == marker.vault_id]


def other_owner_line(paths: Paths, owner: VaultOwner, others_log_in_vault: bool = False) -> str:
    if owner.data_dir == str(paths.data_dir) and owner.host == this_host():
        return (f"this data dir ({paths.data_dir}) was recreated: the vault's reviews were "
                f"recorded by an earlier one at the same place (since {owner.since[:10]}), "
                "whose database and backups are gone; the notes still carry their review "
                "dates. `studyapp rebuild` takes each card's state from them and "
                "`studyapp claim` makes this data dir the vault's own")
    return (f"this vault's reviews are recorded in another data dir ({owner.data_dir} on "
            f"{owner.host}), not in this one ({paths.data_dir}): reviews here are missing there "
            "and undo in one can revert a review made in the other. Use "
            f"`--data-dir {owner.data_dir}`, or `studyapp claim` to make this data dir the "
            "vault's own" + ("; or `studyapp history-log vault` to record into the vault's review "
                             "log, as the other devices do" if others_log_in_vault else ""))


def owner_logs_apart_line(paths: Paths) -> str:
    from studyapp.history.eventlog import data_dir_log, vault_log

    return (f"other devices record their reviews in the vault's review log ({vault_log(paths)}), "
            f"while this data dir keeps its own in {data_dir_log(paths)}: its reviews reach none "
            "of them, and theirs are not replayed here. `studyapp history-log vault` records "
            "them where the other devices do")


def check_history(paths: Paths, *, record: bool, backup: bool = True,
                  now: datetime | None = None, logs_in_vault: bool = True) -> HistoryReport:
    """Compare the database with the markers. With `record`, remember a healthy state, note a
    loss, claim an unclaimed vault and take a due backup; without it, change nothing.
    `logs_in_vault`: this device records into the vault's log (`history_log = "vault"`); one
    that keeps its log in its data dir shares nothing with the devices that log there."""
    now = now or datetime.now(timezone.utc)
    stored = read_data_dir_marker(paths.data_dir_marker)
    if stored is None and record:  # made only if absent: commands started at once agree on the id
        found, written = create_marker(paths.data_dir_marker, DataDirMarker.new(), read_data_dir_marker)
        stored = found if written else None
    marker = DataDirMarker.new() if stored is None else _copy(stored)
    state, summary, problem = _inspect(paths)
    logged = history_is_logged(paths)
    if state is not DatabaseState.UNUSABLE:
        _compare(marker, state, summary, now, rebuildable=logged)
        if marker.lost is not None:
            state = DatabaseState.LOST
    has_id = stored is not None
    if record and not same_marker(stored, marker):
        has_id = write_marker(paths.data_dir_marker, marker) or has_id
    vault_marker = read_vault_marker(paths.vault_marker)
    ownership, owner = _ownership(marker, vault_marker, has_id)
    others_log_in_vault = ownership is Ownership.OTHER and _vault_log_has_events(paths)
    if others_log_in_vault and logs_in_vault:
        ownership, others_log_in_vault = Ownership.SHARED, False
    owner_logs_apart = (ownership is Ownership.OURS and not logs_in_vault
                        and _vault_log_has_events(paths, besides=marker.id))
    has_history = summary is not None and summary.oldest_note is not None
    moved = (ownership is Ownership.OURS and owner is not None
             and owner.data_dir != str(paths.data_dir))
    if (record and state is DatabaseState.OK and has_history and has_id
            and (ownership is Ownership.UNCLAIMED or moved)
            and claim_vault(paths, marker, vault_marker, now) is not None):
        ownership = Ownership.OURS
    report = HistoryReport(paths, state, summary, marker.lost, problem, ownership, owner,
                           list_backups(paths.backups_dir), others_log_in_vault=others_log_in_vault,
                           owner_logs_apart=owner_logs_apart)
    if record and backup and state is DatabaseState.OK and has_history:
        try:
            report.backup_taken = backups.take_backup_if_due(
                paths.database_file, paths.backups_dir, now)
        except (OSError, StoreError) as exc:
            from studyapp.errors import user_message

            report.backup_failed = user_message(exc, paths.database_file)
        if report.backup_taken is not None:
            report.backups = list_backups(paths.backups_dir)
    return report


def accept_current_database(paths: Paths, now: datetime | None = None,
                            keep_loss: bool = False) -> DatabaseSummary:
    """After a restore or a rebuild: the database as it is now is this data dir's history.
    With `keep_loss` (a database started afresh for another vault, `vault_binding`), a loss
    noticed before is still said until the user restores or rebuilds: that database was
    another vault's, not the history that was lost."""
    now = now or datetime.now(timezone.utc)
    marker = read_data_dir_marker(paths.data_dir_marker) or DataDirMarker.new()
    summary = inspect_database(paths.database_file)
    if not keep_loss:
        marker.lost = None
    marker.known = (None if summary.oldest_note is None else KnownHistory(
        summary.database_id, summary.oldest_note, summary.reviews, now.isoformat()))
    write_marker(paths.data_dir_marker, marker)
    return summary


def claim_vault(paths: Paths, marker: DataDirMarker | None = None,
                vault_marker: VaultMarker | None = None,
                now: datetime | None = None) -> VaultOwner | None:
    """Make this data dir the one that records the vault's reviews; None if not writable."""
    now = now or datetime.now(timezone.utc)
    if marker is None:
        marker = read_data_dir_marker(paths.data_dir_marker)
        if marker is None:
            marker, written = create_marker(paths.data_dir_marker, DataDirMarker.new(), read_data_dir_marker)
            if not written:
                return None
    if vault_marker is None:
        from studyapp.vault_binding import marker_or_new

        vault_marker = marker_or_new(paths)
    if not paths.vault_dir.is_dir():
        return None
    owner = VaultOwner(marker.id, str(paths.data_dir), this_host(), now.isoformat())
    if vault_marker.owner is not None and vault_marker.owner.data_dir_id == marker.id:
        owner.since = vault_marker.owner.since
    vault_marker.owner = owner
    return owner if write_marker(paths.vault_marker, vault_marker) else None


def _inspect(paths: Paths) -> tuple[DatabaseState, DatabaseSummary | None, StoreError | None]:
    if not paths.database_file.exists():
        return DatabaseState.NONE, None, None
    try:
        summary = inspect_database(paths.database_file, detail=False)
    except StoreError as exc:
        return DatabaseState.UNUSABLE, None, exc
    return DatabaseState.OK, summary, None


def history_is_logged(paths: Paths) -> bool:
    """Whether a review log (in the vault or in the data dir) holds events for this data dir
    to rebuild its database from."""
    from studyapp.history.eventlog import EventLog, data_dir_log, vault_log

    return any(EventLog(folder, "").has_events()
               for folder in (vault_log(paths), data_dir_log(paths)))


def _vault_log_has_events(paths: Paths, besides: str | None = None) -> bool:
    """Devices share the vault's reviews through its log folder (a log kept in each data dir
    shares nothing: two data dirs on one vault then disagree, as before the log). `besides`:
    a device whose own file there does not count."""
    from studyapp.history.eventlog import EventLog, vault_log

    return any(size > 0 for device, size in EventLog(vault_log(paths), "").sizes().items()
               if device != besides)


def _compare(marker: DataDirMarker, state: DatabaseState, summary: DatabaseSummary | None,
             now: datetime, rebuildable: bool = False) -> None:
    """Update `marker` for the database found: remember it, or note (or end) a loss (none
    when the database is `rebuildable` from the log: it is a cache)."""
    known = marker.known
    holds_known = summary is not None and known is not None and summary.holds(known)
    if marker.lost is not None:  # a loss noticed before a new log began stays until dealt with
        if holds_known:
            marker.lost = None  # the old database is back (copied in by hand)
        else:
            return
    elif rebuildable and not holds_known:
        marker.known = known = None  # remembered afresh once the database is rebuilt
    elif known is not None and not holds_known:
        reason = (LossReason.MISSING if summary is None
                  else LossReason.EMPTY if summary.oldest_note is None else LossReason.REPLACED)
        marker.lost = LostHistory(reason, known.reviews, known.seen_at, now.isoformat())
        return
    if summary is None or summary.oldest_note is None:
        return
    if known is None or (known.database_id, known.reviews) != (summary.database_id,
                                                               summary.reviews):
        marker.known = KnownHistory(summary.database_id, summary.oldest_note, summary.reviews,
                                    now.isoformat())


def _ownership(marker: DataDirMarker, vault_marker: VaultMarker | None,
               has_id: bool) -> tuple[Ownership, VaultOwner | None]:
    if vault_marker is None or vault_marker.owner is None:
        return Ownership.UNCLAIMED, None
    if not has_id:
        return Ownership.UNKNOWN, vault_marker.owner
    if vault_marker.owner.data_dir_id == marker.id:
        return Ownership.OURS, vault_marker.owner
    return Ownership.OTHER, vault_marker.owner


def _copy(marker: DataDirMarker) -> DataDirMarker:
    from copy import deepcopy

    return deepcopy(marker)
