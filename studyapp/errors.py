"""Errors the CLI and TUI show to the user as one clear message, never as a traceback, and
the CLI's exit codes (one per kind of outcome; README, "Exit codes")."""

from enum import IntEnum


class ExitCode(IntEnum):
    """What `studyapp` exits with."""

    OK = 0
    FAILED = 1
    """The command ran and the answer is no: a grade that did not pass, unreadable notes,
    nothing to undo, a review refused because of the note's state."""
    USAGE = 2
    """The command line (or config.toml) is wrong: an unknown option, drill, note or file,
    a path outside the vault, a malformed value. Nothing was changed."""
    INTERRUPTED = 130
    """Ctrl-C."""


class UserError(Exception):
    """Bad input or a state the user can fix; `exit_code` is what the CLI exits with."""

    exit_code = ExitCode.FAILED

    def __init__(self, message: str, exit_code: int | None = None):
        super().__init__(message)
        if exit_code is not None:
            self.exit_code = exit_code


class UsageError(UserError):
    """The command line itself is wrong (exit code 2, like argparse)."""

    exit_code = ExitCode.USAGE
