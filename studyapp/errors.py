"""What the user sees when something fails, and the CLI's exit codes (one per kind of outcome;
README, "Exit codes").

A failure the user can act on (a `UserError`, an OS error on one of their files, a database
failure) is one line, in the CLI (`cli.main`) and in the TUI (`StudyApp.report_error`), never a
traceback; `user_message` is that line. Anything else is a bug of ours: the CLI says so in one
line and saves the traceback (`report_bug`); `STUDYAPP_DEBUG=1` lets it through instead.
"""

from __future__ import annotations

import errno
import os
import re
import sys
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
    BUG = 70
    """A failure no check foresaw: a bug of ours (EX_SOFTWARE). One line says so and where the
    traceback was saved (`crash.log` in the data dir)."""
    INTERRUPTED = 130
    """Ctrl-C."""
    TERMINATED = 143
    """SIGTERM (128 + 15), ended as Ctrl-C ends a command."""


class UserError(Exception):
    """Bad input or a state the user can fix; `exit_code` is what the CLI exits with."""

    exit_code: int = ExitCode.FAILED

    def __init__(self, message: str, exit_code: int | None = None):
        super().__init__(message)
        if exit_code is not None:
            self.exit_code = exit_code


class UsageError(UserError):
    """The command line itself is wrong (exit code 2, like argparse)."""

    exit_code = ExitCode.USAGE


_OS_REASONS = {
    errno.ENOSPC: ("no space left on the device", "free some space and try again"),
    errno.EDQUOT: ("disk quota exceeded", "free some space and try again"),
    errno.EROFS: ("read-only file system", "it cannot be written here"),
    errno.EACCES: ("permission denied", "check that it is writable by you"),
    errno.EPERM: ("operation not permitted", "check that it is writable by you"),
    errno.EIO: ("input/output error", "the disk may be failing"),
}
_TEMP_NAME = re.compile(r"^\.(?P<name>.+)\.[0-9a-f]{8}\.studyapp-tmp$")
"""`atomic.py`'s temp files (`.<name>.<8 hex>.studyapp-tmp`): the user knows the note's name
(a long one cut and ending in `…`, `atomic.temp_path`)."""


def user_message(exc: BaseException, database_file: os.PathLike | str | None = None) -> str | None:
    """One clear line for a failure the user can act on, or None for a bug.

    User errors speak for themselves; OS errors say which file and what to do; sqlite3 errors
    are explained as the review database's (`database_file`) problem.
    """
    if isinstance(exc, UserError):
        return str(exc)
    sqlite3 = sys.modules.get("sqlite3")
    if sqlite3 is not None and isinstance(exc, sqlite3.Error):
        from studyapp.store import store_error

        return str(store_error(exc, None if database_file is None else os.fspath(database_file)))
    if isinstance(exc, OSError):
        return _os_message(exc)
    return None


def os_reason(exc: OSError) -> str:
    """What went wrong, in words, without the advice (`no space left on the device`)."""
    return _OS_REASONS.get(exc.errno or 0, (exc.strerror or str(exc), ""))[0]


def _os_message(exc: OSError) -> str:
    reason, hint = _OS_REASONS.get(exc.errno or 0, (exc.strerror or str(exc), ""))
    if isinstance(exc.filename, (str, bytes, os.PathLike)):  # not a file descriptor's number
        path = os.fsdecode(exc.filename)
        folder, name = os.path.split(path)
        temp = _TEMP_NAME.match(name)
        if temp:
            path = os.path.join(folder, temp["name"])
        reason = f"{path}: {reason}"
    return f"{reason}; {hint}" if hint else reason


CRASH_LOG = "crash.log"


def report_bug(exc: BaseException, data_dir: os.PathLike | str | None, argv: list[str]) -> str:
    """The one line a user sees for a bug of ours; its traceback is appended to `crash.log` in
    the data dir (with the time, the version and the command), or, if that cannot be written,
    is printed after all, so that nothing is lost."""
    import time
    import traceback

    from studyapp import __version__

    where = "it could not be saved"
    details = "".join(traceback.format_exception(exc))
    if data_dir is not None:
        log = os.path.join(os.fspath(data_dir), CRASH_LOG)
        try:
            os.makedirs(os.fspath(data_dir), exist_ok=True)
            with open(log, "a", encoding="utf-8") as handle:
                handle.write(f"--- {time.strftime('%Y-%m-%d %H:%M:%S %z')} studyapp {__version__}: "
                             f"studyapp {' '.join(argv)}\n{details}\n")
            where = f"the details are in {log}"
        except OSError:
            pass
    if not where.startswith("the details"):
        sys.stderr.write(details)
    text = " ".join(str(exc).split())[:300]
    return (f"internal error (a bug in studyapp, please report it): {type(exc).__name__}"
            f"{': ' + text if text else ''}; {where}")
