"""CLI subcommands, grouped by domain; each module exposes `register(subparsers, common)`."""

from __future__ import annotations


def open_app(ctx) -> int:
    """`studyapp` with no subcommand: the terminal app."""
    from studyapp.commands.notes import print_due

    # Until the TUI lands, the bare command shows what is due.
    return print_due(ctx, as_json=False)
