"""CLI subcommands, grouped by domain; each module exposes `register(subparsers, common)`."""

from __future__ import annotations


def open_app(ctx) -> int:
    """`studyapp` with no subcommand: the terminal app (Textual is imported only here)."""
    from studyapp.tui.app import run_app

    return run_app(ctx)
