"""History commands: backup list / create / restore, rebuild, claim, sync, history-log.

~430 lines on purpose: each of these commands replaces or moves the history as a whole, and
they share its guards (another vault's backup refused, the writer lock held, the database made
this vault's first): kept in one file, a newcomer checks them side by side."""

from __future__ import annotations

import argparse
import sys
from datetime import datetime, timezone


def register(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("backup", parents=[common], help="list, take or restore database backups",
                       description="Backups of the review database are taken automatically when a "
                       "command opens it (at most every few hours, the newest kept); restoring "
                       "keeps the current database as a backup first.")
    actions = p.add_subparsers(dest="action", metavar="ACTION", required=True)
    q = actions.add_parser("list", parents=[common], help="the backups, newest first")
    q.set_defaults(handler=backup_list, guard_history=False, repeatable=True)
    q = actions.add_parser("create", parents=[common], help="take a backup now")
    q.set_defaults(handler=backup_create, guard_history=False)
    q = actions.add_parser("restore", parents=[common],
                           help="bring back a backup (default: the newest)")
    q.add_argument("name", nargs="?", metavar="NAME", help="a name from `studyapp backup list`")
    q.set_defaults(handler=backup_restore, guard_history=False)

    p = sub.add_parser("rebuild", parents=[common],
                       help="take card state from the notes' review keys (when no backup helps)")
    p.set_defaults(handler=rebuild, guard_history=False)

    p = sub.add_parser("claim", parents=[common],
                       help="make this data dir the one that records the vault's reviews")
    p.set_defaults(handler=claim, guard_history=False, repeatable=True)

    p = sub.add_parser("sync", parents=[common],
                       help="replay the review log of every device and update the notes",
                       description="Bring the database (a cache) and the notes' review keys up "
                       "to every device's review log; it also happens whenever a command opens "
                       "the database and a log file changed.")
    p.add_argument("--full", action="store_true",
                   help="replay the whole log even if no file changed")
    p.set_defaults(handler=sync, repeatable=True)  # a second sync finds nothing to do

    p = sub.add_parser("import-history", parents=[common],
                       help="take review state from another tool (Obsidian Spaced Repetition, Anki)",
                       description="osr: read Obsidian Spaced Repetition's sr-due/sr-interval/"
                       "sr-ease front matter and <!--SR:...--> comments and start each note's FSRS "
                       "card from them (notes studyapp already schedules are left alone; the "
                       "notes' files are not changed). anki FILE: write each note of an Anki "
                       "export as a vault note (media into an attachments folder) and replay its "
                       "review log. Running either again adds nothing.")
    p.add_argument("source", choices=("osr", "anki"),
                   help="osr: Obsidian Spaced Repetition; anki: an Anki export (FILE)")
    p.add_argument("file", nargs="?", metavar="FILE", help="anki: the .apkg or .colpkg file")
    p.add_argument("--folder", default="anki", metavar="DIR",
                   help="anki: the vault folder the notes go to (default: anki)")
    p.add_argument("--dry-run", action="store_true", help="say what would be imported")
    p.set_defaults(handler=import_history, repeatable=True)  # running it again adds nothing

    p = sub.add_parser("history-log", parents=[common],
                       help="keep the review log in the vault or in the data dir",
                       description="Move every device's log file to PLACE and remember the "
                       "choice (the `history_log` setting): `vault` (default) syncs the history "
                       "with the notes; `data-dir` keeps it on this machine only.")
    p.add_argument("place", choices=("vault", "data-dir"), nargs="?",
                   help="where to keep it (omit to show where it is)")
    p.set_defaults(handler=history_log, repeatable=True)  # a second move finds it there


def _now() -> datetime:
    """Backups and markers use the real clock: `--now` is about study days, not files."""
    return datetime.now(timezone.utc)


def _count(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def _describe(summary) -> str:
    what = f"{_count(summary.reviews, 'review')} of {_count(summary.notes, 'note')}"
    if summary.newest_review is None:
        return what
    return f"{what}, newest {summary.newest_review.astimezone():%Y-%m-%d %H:%M}"


def backup_list(args, ctx) -> int:
    from studyapp.backups import check_backup, list_backups
    from studyapp.store import StoreError

    found = list_backups(ctx.paths.backups_dir)
    if not found:
        print(f"no backups yet in {ctx.paths.backups_dir}")
        return 0
    width = max(len(backup.name) for backup in found)
    for backup in found:
        try:
            what = _describe(check_backup(backup))
        except StoreError as exc:
            what = f"unusable: {exc}"
        print(f"{backup.name:<{width}}  {backup.taken_at.astimezone():%Y-%m-%d %H:%M}  {what}")
    return 0


def backup_create(args, ctx) -> int:
    from studyapp.backups import take_backup
    from studyapp.errors import UserError

    if not ctx.paths.database_file.exists():
        raise UserError(f"there is no review database to back up ({ctx.paths.database_file})")
    backup = take_backup(ctx.paths.database_file, ctx.paths.backups_dir, _now())
    print(f"backed up to {backup.path}")
    return 0


def backup_restore(args, ctx) -> int:
    from studyapp.backups import default_restore, list_backups, restore_backup
    from studyapp.errors import UsageError, UserError
    from studyapp.history_guard import accept_current_database
    from studyapp.rebuild import rebuild_from_notes

    if args.name is not None and not args.name.strip():  # `restore ""`, `restore "$UNSET"`: not "the newest"
        raise UsageError("an empty backup name names no backup: give a name from "
                         "`studyapp backup list`, or none for the newest")
    found = list_backups(ctx.paths.backups_dir)
    if args.name:
        named = [b for b in found if args.name in (b.name, b.path.stem)]
        if not named:
            raise UsageError(f"no backup named {args.name}; `studyapp backup list` shows them")
        chosen = named[0]
    else:  # this vault's newest: another vault's newer one is refused below, not chosen
        latest = default_restore([b for b in found if not _another_vaults(ctx, b.path)]) \
            or default_restore(found)
        if latest is None:
            raise UserError(f"there are no backups in {ctx.paths.backups_dir}; "
                            "`studyapp rebuild` takes card state from the notes instead")
        chosen = latest
    _refuse_another_vaults(ctx, chosen.path)
    from studyapp.locking import WriterLock

    # held throughout, as `rebuild` holds it: a review written between the restore and the
    # cards' catching up with the notes would be overwritten by them
    with WriterLock(ctx.paths.writer_lock_file).hold():
        result = restore_backup(ctx.paths.database_file, ctx.paths.backups_dir, chosen, _now())
        accept_current_database(ctx.paths)
        print(f"restored {result.backup.name}: {_describe(result.summary)}")
        if result.saved_current is not None:
            print(f"the database as it was is kept as {result.saved_current.name}")
        if result.damaged_kept is not None:
            print(f"the damaged database was moved to {result.damaged_kept}")
        caught_up = rebuild_from_notes(ctx)
    accept_current_database(ctx.paths)
    if caught_up.ahead:
        print(f"{len(caught_up.ahead)} note(s) were reviewed after this backup: their cards now "
              "follow their review keys; those reviews are not in the log")
    if missing := len(caught_up.rebuilt) - len(caught_up.ahead):  # another tool's reviews, say
        print(f"{missing} note(s) with review keys had no card in this backup: their cards "
              "follow their keys")
    return 0


def _refuse_another_vaults(ctx, backup) -> None:
    """A backup is this vault's when some device whose log it read has a log file here: one
    taken in another vault's data dir would write that vault's reviews into this vault's log
    and notes for good (its log's files are missing here, so the reviews are adopted). With no
    log file here at all (the log itself lost) any backup may be restored."""
    import sqlite3
    from urllib.parse import quote

    from studyapp.errors import UserError
    from studyapp.history.eventlog import LOG_SUFFIX, log_dir

    try:
        conn = sqlite3.connect(f"file:{quote(str(backup))}?mode=ro", uri=True)
        try:
            devices = {row[0] for row in conn.execute("SELECT device FROM log_files WHERE size > 0")}
        finally:
            conn.close()
    except sqlite3.Error:
        return  # damaged, or from before the log: restoring it says so
    served = _another_vaults(ctx, backup)
    if served is not None:
        raise UserError(f"{backup.name} holds the history of another vault ({served.path}): "
                        "restoring it would give this vault that vault's reviews; not "
                        f"restored (`studyapp --vault {served.path} backup restore "
                        f"{backup.stem}` restores it there)")
    folder = log_dir(ctx.paths, ctx.settings)
    here = {entry.name.removesuffix(LOG_SUFFIX) for entry in folder.glob(f"*{LOG_SUFFIX}")} if folder.is_dir() else set()
    if devices and here and not devices & here:
        raise UserError(f"{backup.name} holds the history of another vault (none of the devices whose "
                        f"log it read has a log in {folder}): restoring it would write that vault's "
                        "reviews into this vault's notes; not restored")


def _another_vaults(ctx, backup):
    """The vault (`VaultBinding`) a backup's database serves when that is not this vault."""
    from studyapp.markers import read_vault_marker
    from studyapp.vault_binding import bound_in_file

    served, marker = bound_in_file(backup), read_vault_marker(ctx.paths.vault_marker)
    return served if served is not None and marker is not None and \
        marker.vault_id != served.id else None


def rebuild(args, ctx) -> int:
    from studyapp.backups import inspect_database, move_aside
    from studyapp.history_guard import accept_current_database
    from studyapp.rebuild import rebuild_from_notes
    from studyapp.store import StoreError, StoreProblem

    database = ctx.paths.database_file
    if database.exists():
        try:
            inspect_database(database, detail=False)
        except StoreError as exc:
            if exc.problem is not StoreProblem.DAMAGED:
                raise
            kept = move_aside(database, ctx.paths.backups_dir, _now())
            print(f"the damaged database was moved to {kept}")
    from studyapp.locking import WriterLock

    # held throughout: the rebuild's cards are written without the lock otherwise, and a
    # command on another vault could give the database to that vault meanwhile
    with WriterLock(ctx.paths.writer_lock_file).hold():
        result = rebuild_from_notes(ctx)
    accept_current_database(ctx.paths)
    print(f"took the card state of {len(result.rebuilt)} notes from their review keys; "
          f"kept {result.kept} up-to-date cards; {result.never_reviewed} notes never reviewed")
    return 0


def claim(args, ctx) -> int:
    from studyapp.errors import UserError
    from studyapp.history_guard import claim_vault

    owner = claim_vault(ctx.paths)
    if owner is None:
        for marker in (ctx.paths.data_dir_marker, ctx.paths.vault_marker):
            if marker.is_symlink() or (marker.exists() and not marker.is_file()):
                raise UserError(f"could not write {marker}: something other than a file is in its "
                                "place; move it away and claim again")
        raise UserError(f"could not write {ctx.paths.vault_marker} (is the vault writable?)")
    print(f"{ctx.paths.data_dir} now records the reviews of {ctx.paths.vault_dir}")
    return 0


def sync(args, ctx) -> int:
    from studyapp.reviews import ReviewService

    with ReviewService(ctx) as service:  # it says what its opening repaired or left out (`ctx.report`)
        result = service.sync(force=args.full) if args.full else service.synced
        if not args.full and not result.replayed:
            result = service.sync()
    if result is not service.synced:
        from studyapp.textwidth import shown

        # the opening already said its lines (`ctx.report`); a forced replay finds them again
        said = set(service.startup_lines()) if ctx.report is not None else set()
        for line in result.problems:
            if line not in said:  # it can name another device's file: shown, not obeyed
                print(f"studyapp: warning: {shown(line)}", file=sys.stderr)
    if result.adopted:
        print(f"wrote {_count(result.adopted, 'review')} of the database into the review log")
    if not result.replayed:
        print(f"up to date with the review log ({service.history_log.folder})")
        return 0
    print(f"replayed {_count(result.replayed, 'event')} from {service.history_log.folder}; "
          f"updated the review keys of {_count(len(result.written), 'note')}")
    for path in result.written:
        print(f"  {path}")
    return 0


def history_log(args, ctx) -> int:
    from studyapp.config_edit import set_setting
    from studyapp.history.eventlog import log_dir
    from studyapp.history.sync import move_log

    if args.place is None:
        print(f"{ctx.settings.history_log}: {log_dir(ctx.paths, ctx.settings)}")
        return 0
    from studyapp.locking import WriterLock

    lock = WriterLock(ctx.paths.writer_lock_file)
    with lock.hold():  # no review appends to it meanwhile
        _serve_this_vault(ctx, lock)
        # the setting is saved before the old file goes: a failure leaves the log where it is read
        source, target, moved = move_log(
            ctx, args.place, then=lambda: set_setting(ctx.paths.config_file, "history_log", args.place))
    if source == target:
        print(f"the review log is already kept in {target}")
    else:
        print(f"moved {_count(moved, 'log file')} from {source} to {target}")
    return 0


def _serve_this_vault(ctx, lock) -> None:
    """Before the log moves: the database must be this vault's (`vault_binding`). Moved into
    the data dir while it served another vault, this vault's log was that vault's next
    replay, written into its notes; moved back from there, the other vault's reviews came
    into this vault's log. Refused as a command would be (the log in the data dir)."""
    if not ctx.paths.database_file.exists():
        return  # no history here yet: the next command's database serves this vault
    from studyapp.store import Store
    from studyapp.vault_binding import serve_this_vault

    with Store.open(ctx.paths) as store:
        _, said = serve_this_vault(ctx, store, lock)
    for line in said:
        if ctx.report is not None:
            ctx.report(line)


def import_history(args, ctx) -> int:
    from studyapp.errors import UsageError

    if args.source == "anki":
        if not args.file:
            raise UsageError("import-history anki needs the export: import-history anki FILE")
        return import_anki(args, ctx)
    if args.file:
        raise UsageError("import-history osr reads the vault itself: it takes no FILE")
    from studyapp.errors import UserError
    from studyapp.history.events import Event, EventKind
    from studyapp.history.osr import (
        OsrValueError,
        card_from,
        import_event_id,
        import_time,
        schedule_of,
        unusable,
    )
    from studyapp.reviews import ReviewService
    from studyapp.schedule import has_legacy_history
    from studyapp.textwidth import shown

    with ReviewService(ctx) as service:
        snapshot = service.load()
        keys = {row.path: row.key for row in service.store.live_notes()}
        cards = service.store.cards()
        logged = {event.id for event in service.history_log.read().events}
        planned, already, scheduled, odd = [], 0, 0, []
        for note in snapshot.notes:
            # a card of ours, or review keys a card is taken from (README: it keeps them)
            ours = keys.get(note.path) in cards or has_legacy_history(note.review_count,
                                                                      note.last_reviewed)
            try:
                found = schedule_of(note)
            except OsrValueError as exc:
                scheduled += ours  # left alone either way: its OSR values do not matter
                if not ours:
                    odd.append(f"{note.path}: {exc}")
                continue
            except UserError as exc:  # the note cannot be read
                odd.append(str(exc))
                continue
            if found is None:
                continue
            event_id = import_event_id(note.path, found)
            if event_id in logged:
                already += 1
                continue
            if ours:
                scheduled += 1
                continue
            try:
                card = card_from(found, ctx.settings.desired_retention)
            except ValueError as exc:  # what the SM-2 conversion refuses
                odd.append(f"{note.path}: the SM-2 conversion refused it ({exc})")
                continue
            if import_time(card) > ctx.now():  # a typo'd `sr-due` (2099): never due, never rated
                odd.append(f"{note.path}: its last review would be {import_time(card):%Y-%m-%d}, "
                           "after now (sr-due less sr-interval)")
                continue
            event = Event(event_id, EventKind.IMPORT, import_time(card),
                          service.history_log.device, note.path,
                          {"seed": card.to_json(), "source": "osr"})
            reason = unusable(event)
            if reason is not None:
                odd.append(f"{note.path}: the review log would not keep its import ({reason})")
                continue
            planned.append((note.path, found, event))
        verb = "would import" if args.dry_run else "imported"
        unread = snapshot.problems  # its OSR values, if any, cannot be seen: named, not skipped silently
        for problem in unread:
            print(f"studyapp: warning: {shown(problem.path)}: {shown(problem.reason)}: not read", file=sys.stderr)
        for line in odd:
            print(f"studyapp: warning: {shown(line)}: left out", file=sys.stderr)
        for path, found, _ in planned:
            print(f"{path}: due {found.due}, interval {found.interval_days}d, "
                  f"ease {found.ease:g}")
        if planned and not args.dry_run:
            service.history_log.append(*(event for _, _, event in planned))
            service.sync()
    left_out = f"; {len(odd)} with OSR values studyapp cannot use (left out)" if odd else ""
    if unread:
        left_out += f"; {_count(len(unread), 'note')} could not be read"
    print(f"{verb} {_count(len(planned), 'note')}; {already} already imported; "
          f"{scheduled} already scheduled by studyapp (left alone){left_out}")
    return 0


def import_anki(args, ctx) -> int:
    from pathlib import Path

    from studyapp.context import EARLIEST_NOW, LATEST_NOW
    from studyapp.errors import UsageError
    from studyapp.history.anki import import_package, read_package
    from studyapp.reviews import ReviewService
    from studyapp.textwidth import shown

    source = Path(args.file).expanduser()
    if not source.is_file():
        raise UsageError(f"no such file: {source}" if not source.exists()
                         else f"{source} is not a file (an .apkg or .colpkg export)")
    folder = _anki_folder(args.folder, ctx.paths.vault_dir)
    package = read_package(source)
    with ReviewService(ctx) as service:
        plan = import_package(service, package, folder, dry_run=args.dry_run)
    verb = "would import" if args.dry_run else "imported"
    for path in plan.written:
        print(f"{shown(path)}: new note")
    for line in plan.problems:  # the export's own names: shown, never obeyed by the terminal
        print(f"studyapp: warning: {shown(line)}", file=sys.stderr)
    print(f"{verb} {_count(len(plan.written), 'note')}, {_count(plan.reviews, 'review')} and "
          f"{_count(len(plan.media), 'media file')} from {source.name} ({package.format}); "
          f"{plan.already_notes} note(s) and {plan.already_reviews} review(s) already imported")
    if plan.out_of_range:
        print(f"{_count(plan.out_of_range, 'review')} with a time outside "
              f"{EARLIEST_NOW.year} to {LATEST_NOW.year} left out")
    if plan.other_card_reviews:
        print(f"{_count(plan.other_card_reviews, 'review')} of further cards (reverse cards) "
              "left out: a note is one card here")
    return 0


def _anki_folder(given: str, vault_dir) -> str:
    """`--folder` as a vault-relative path: a folder inside the vault (symlinks followed),
    not the vault itself, not hidden (`.studyapp` holds the log, `.obsidian` an app's own)."""
    from pathlib import Path

    from studyapp.errors import UsageError

    wanted = Path(given).expanduser()
    root = Path(vault_dir).resolve()
    try:
        inside = (wanted if wanted.is_absolute() else root / wanted).resolve().relative_to(root)
    except (ValueError, OSError, RuntimeError):
        raise UsageError(f"--folder {given}: not a folder inside the vault ({root})") from None
    if not inside.parts:
        raise UsageError(f"--folder {given}: name a folder inside the vault (e.g. anki), "
                         "not the vault itself")
    if any(part.startswith(".") for part in inside.parts):
        raise UsageError(f"--folder {given}: a hidden folder ({inside.as_posix()}) is no place "
                         "for notes")
    from studyapp.vault.scan import odd_name_reason, shown_path

    if any(odd_name_reason(part, "folder") for part in inside.parts):  # the vault would skip its notes
        raise UsageError(f"--folder {shown_path(given)}: the vault skips a folder whose name holds control "
                         "characters or bytes that are not UTF-8; name another")
    return inside.as_posix()
