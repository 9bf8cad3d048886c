"""Errors the CLI and TUI show to the user as one clear message, never as a traceback."""


class UserError(Exception):
    """Bad input or a state the user can fix; `exit_code` is what the CLI exits with."""

    exit_code = 1

    def __init__(self, message: str, exit_code: int | None = None):
        super().__init__(message)
        if exit_code is not None:
            self.exit_code = exit_code


class UsageError(UserError):
    """The command line itself is wrong (exit code 2, like argparse)."""

    exit_code = 2
