"""CLI subcommands, grouped by domain; each module exposes `register(subparsers, common)`."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from studyapp.history_guard import Notice


def confirmed(question: str) -> bool:
    """A y/N question on the terminal; no answer (end of input, or no standard input at all:
    `<&-`, where input() raises RuntimeError) is a no, said on stderr with the way round it."""
    try:
        answer = input(f"{question} [y/N] ")
    except (EOFError, RuntimeError):
        print("\nstudyapp: no answer on standard input, taken as no (--yes answers yes)", file=sys.stderr)
        return False
    return answer.strip().lower() in ("y", "yes")


def open_app(ctx) -> int:
    """`studyapp` with no subcommand: the terminal app (Textual is imported only here)."""
    from studyapp.vault.scan import forget_scan_ahead

    parse_first_start_ahead(ctx)
    try:
        from studyapp.tui.app import run_app

        notices = history_notices(ctx)
        code = run_app(ctx, notices=notices)
    finally:
        forget_scan_ahead()  # one the app never took (it quit before loading): stopped and reaped
    remember_history(ctx)
    return code


def parse_first_start_ahead(ctx) -> bool:
    """The app's first start (no metadata cache yet): its notes are scanned, and a big vault's
    parsed, in a forked child while Textual is imported and draws its first frame; the app's
    load takes the result (`start_scan_ahead`). Called before any thread starts."""
    import os

    from studyapp.vault.scan import start_scan_ahead

    if os.path.exists(ctx.paths.cache_file):  # an unreadable data dir: no parse ahead, no error here
        return False
    return start_scan_ahead(ctx.paths.vault_dir, ctx.paths.cache_file, parse=True)


def history_notices(ctx) -> list[Notice]:
    """Check the review history as a command opens (see `history_guard`): what to tell."""
    from studyapp.errors import user_message
    from studyapp.history.sync import first_use_notice
    from studyapp.history_guard import Notice, check_history

    try:
        first = first_use_notice(ctx)
        return [*([Notice(first, warning=False)] if first else []),
                *(Notice(line) for line in check_history(
                    ctx.paths, record=True, logs_in_vault=ctx.settings.history_log == "vault").notices())]
    except OSError as exc:  # the check is advice: it never stops the command
        return [Notice(f"could not check the review history: {user_message(exc)}")]


def warn_about_history(ctx) -> None:
    for notice in history_notices(ctx):
        print(f"studyapp: {'warning' if notice.warning else 'note'}: {notice.text}", file=sys.stderr)


def remember_history(ctx) -> None:
    """After a command: remember the database it left (and claim an unclaimed vault), so a
    loss before the next command is noticed."""
    from studyapp.history_guard import check_history

    try:
        check_history(ctx.paths, record=True, backup=False, logs_in_vault=ctx.settings.history_log == "vault")
    except OSError:
        pass  # tried again at the next start
