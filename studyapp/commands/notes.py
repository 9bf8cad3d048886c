"""Vault commands: due, import, doctor. They parse, call the core (`review_session` builds
`due`'s queue, as it builds the TUI's) and print."""

from __future__ import annotations

import argparse
import sys

from studyapp.errors import ExitCode


def register(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("due", parents=[common], help="list notes due today (per --now), then new notes")
    p.add_argument("--json", action="store_true", help="print a JSON array")
    # scans_vault: a read-only command that loads the whole vault first (cli.main scans ahead)
    p.set_defaults(handler=lambda args, ctx: print_due(ctx, as_json=args.json), scans_vault=True)

    p = sub.add_parser("import", parents=[common], help="add the metadata block to notes; copy outside files in",
                       description="With no PATH: add the standard metadata block to every note in the vault "
                       "that lacks one. With PATHs (files or folders outside the vault): copy their .md, "
                       ".markdown and .txt files into the vault as .md notes with the block. Bodies are kept "
                       "byte for byte; importing twice changes nothing.")
    p.add_argument("paths", nargs="*", metavar="PATH", help="files or folders outside the vault")
    p.add_argument("--dry-run", action="store_true", help="show what would happen, write nothing")
    p.add_argument("--yes", action="store_true",
                   help="do not ask before adding blocks to more than 20 notes (a mistaken --vault)")
    p.add_argument("-v", "--verbose", action="store_true", help="also list files already imported")
    p.set_defaults(handler=print_import, repeatable=True)  # importing twice changes nothing

    p = sub.add_parser("doctor", parents=[common], help="report the environment and every unreadable note")
    p.add_argument("--torch", action="store_true",
                   help="also import torch (in a subprocess, a few seconds) to check CUDA and the device")
    p.set_defaults(handler=lambda args, ctx: _doctor(ctx, args.torch), guard_history=False,  # reports it
                   repeatable=True)


def _doctor(ctx, probe: bool) -> int:
    from studyapp.doctor import run_doctor

    return run_doctor(ctx, probe=probe)


def load_vault(ctx, vault=None):
    """Load the context's vault (with the metadata cache) and report problems on stderr."""
    from studyapp.vault import Vault

    vault = vault or Vault(ctx.paths.vault_dir, ctx.paths.cache_file)
    snapshot = vault.load()
    for problem in snapshot.problems:
        print(f"studyapp: warning: {problem.path}: {problem.reason}", file=sys.stderr)
    return snapshot


def print_due(ctx, as_json: bool) -> int:
    from studyapp.review_session import due_queue
    from studyapp.vault import Vault

    vault = Vault(ctx.paths.vault_dir, ctx.paths.cache_file)
    with vault.cache_writes_held():  # the parsed rows and the pairings worked out: one write
        snapshot = load_vault(ctx, vault)
        from studyapp.commands.drill_reviews import due_drill_rows
        from studyapp.reviews import ReviewService

        with ReviewService(ctx) as service:  # one for both: opening it checks and syncs the history
            due, counts = due_queue(ctx, snapshot, service)  # the scheduler's queue: limits, order, due_at, recall
            drills = due_drill_rows(ctx, snapshot.notes, service)  # due drills follow the notes
        if as_json:
            import json

            # One object per line: readable, and json's C encoder (an indent would use the slow one).
            rows = ",\n".join([json.dumps({**d.as_json(), "kind": "note"}, ensure_ascii=False) for d in due]
                              + [json.dumps(d, ensure_ascii=False) for d in drills])
        vault.remember_pairings(snapshot.notes)  # the drills worked out: cached from now on
    if as_json:
        sys.stdout.write(f"[\n{rows}\n]\n" if rows else "[]\n")
        return ExitCode.OK
    _print_due_table(due, counts, total=len(snapshot.notes))
    if drills:
        print("Drills due after the notes: " + ", ".join(
            f"{d['id']}{' (new)' if d['is_new'] else ''}" for d in drills))
    return ExitCode.OK


def _print_due_table(due, counts, total: int) -> None:
    import shutil

    from studyapp.textwidth import fit, shown

    later = f" (+{counts.waiting} learning step(s) due later in the session)" if counts.waiting else ""
    print(f"{counts.new} new · {counts.learning} learning · {counts.review} review{later}; "
          f"{total} notes in the vault")
    if not due:
        return
    columns = shutil.get_terminal_size((100, 24)).columns
    title_width = max(20, min(60, columns - 46))
    print(f"{'NEXT REVIEW':<11}  {'OVERDUE':>7}  {'DIFF':<6}  {fit('TITLE', title_width)}  PATH")
    for d in due:
        note = d.note
        # the day the card falls due on this machine's calendar: the note's `next_review` is
        # the reviewer's, a day off when they reviewed it in another time zone
        when = "new" if d.is_new else d.due_at.astimezone().date().isoformat()
        overdue = "" if d.is_new else (f"{d.days_overdue}d" if d.days_overdue else "today")
        difficulty = fit(shown(note.difficulty or "-"), 6)  # by cells: `困难` is four
        line = f"{when:<11}  {overdue:>7}  {difficulty}  {fit(note.title, title_width)}  {note.path}"
        print(shown(line).rstrip())  # a difficulty or a path may hold "\e[2J" (YAML escapes)


def print_import(args, ctx) -> int:
    from pathlib import Path

    from studyapp.locking import WriterLock
    from studyapp.vault import Vault
    from studyapp.vault.importer import import_notes

    vault = Vault(ctx.paths.vault_dir, ctx.paths.cache_file)
    go_ahead = None if args.yes else (lambda paths: _many_confirmed(vault.root, paths))
    lock = WriterLock(ctx.paths.writer_lock_file)
    actions = import_notes(vault, [Path(p) for p in args.paths], ctx.today(), args.dry_run, go_ahead, lock.hold)
    if actions is None:
        print("not imported: nothing was changed")
        return ExitCode.FAILED
    prefix = "would " if args.dry_run else ""
    counts: dict[str, int] = {}
    for action in actions:
        counts[action.kind] = counts.get(action.kind, 0) + 1
        if action.kind == "problem":
            print(f"studyapp: warning: {action.describe()}", file=sys.stderr)
        elif action.kind != "already-imported" or args.verbose:
            print(prefix + action.describe())
    done = counts.get("add-block", 0) + counts.get("copy", 0)
    print(f"{prefix}import {done} note(s); {counts.get('already-imported', 0)} already imported, "
          f"{counts.get('problem', 0)} skipped with problems")
    return ExitCode.FAILED if counts.get("problem") else ExitCode.OK


SHOWN_PATHS = 5


def _many_confirmed(root, paths: list[str]) -> bool:
    """Before blocks go into many notes at once: how many and where, and a y/N question on a
    terminal. Without one, a UserError saying how to look first, and how to go ahead."""
    from studyapp.commands import confirmed
    from studyapp.errors import UserError
    from studyapp.textwidth import shown

    where = f"{len(paths)} notes in {shown(str(root))}"
    if sys.stdin is None or not sys.stdin.isatty():  # None: no standard input at all (`<&-`)
        raise UserError(f"import would add the metadata block to {where}, rewriting each file; nothing "
                        "was changed: look with `studyapp import --dry-run`, then pass --yes to go ahead")
    print(f"import would add the metadata block to {where}, rewriting each file:")
    for path in paths[:SHOWN_PATHS]:
        print(f"  {shown(path)}")
    if len(paths) > SHOWN_PATHS:
        print(f"  ... and {len(paths) - SHOWN_PATHS} more (`studyapp import --dry-run` lists them)")
    return confirmed("Add them?")

