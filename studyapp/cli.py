"""The `studyapp` command line: global options, subcommand dispatch, error reporting.

Each module in `studyapp.commands` registers its subcommands; handlers import heavy modules
lazily so `studyapp --help` and the TUI start fast.
"""
# ruff: noqa: E402 - the excepthook is set before the imports it covers

import sys

_python_excepthook = sys.excepthook


def _made_of_interrupt(exc: BaseException) -> bool:
    """True for an exception Python made of a Ctrl-C: 3.11 turns one that lands while a
    dataclass is built (in `__set_name__`) into a RuntimeError. The user's, not a bug."""
    seen: BaseException | None = exc
    for _ in range(20):  # a chain is short; a cycle is not followed for ever
        if seen is None:
            return False
        if isinstance(seen, KeyboardInterrupt):
            return True
        seen = seen.__cause__ or seen.__context__
    return False


def _quiet_interrupt(kind, value, traceback) -> None:
    """Ctrl-C while the command's modules import, before `main` can catch it: no traceback;
    Python then ends the process by SIGINT (130 to a shell). Other exceptions as usual."""
    if not _made_of_interrupt(value):
        _python_excepthook(kind, value, traceback)
    elif not isinstance(value, KeyboardInterrupt):  # Python ends by SIGINT for a bare one only
        import os
        import signal

        signal.signal(signal.SIGINT, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGINT)


_python_unraisablehook = sys.unraisablehook


def _quiet_unraisable(unraisable) -> None:
    """A Ctrl-C that lands where Python cannot raise it (an import lock's callback, the
    shutdown after the command finished) is dropped by Python anyway: dropped without a
    traceback."""
    if not isinstance(unraisable.exc_value, KeyboardInterrupt):
        _python_unraisablehook(unraisable)


sys.excepthook = _quiet_interrupt  # first of all (and no `from __future__`: an import too)
sys.unraisablehook = _quiet_unraisable

import argparse
import codecs
import gc
import importlib
import os
from collections.abc import Sequence

from studyapp import __version__
from studyapp.errors import ExitCode, UserError, user_message

COMMAND_MODULES = (
    "studyapp.commands.notes",
    "studyapp.commands.reviews",
    "studyapp.commands.drills",
    "studyapp.commands.history",
    "studyapp.commands.drill_reviews",
    "studyapp.commands.dev",
)
COMMANDS = {
    "due": "notes", "import": "notes", "doctor": "notes",
    "rate": "reviews", "undo": "reviews", "suspend": "reviews", "unsuspend": "reviews",
    "stats": "reviews", "optimize": "reviews",
    "drills": "drills", "start": "drills", "grade": "drills", "watch": "drills",
    "backup": "history", "rebuild": "history", "claim": "history", "sync": "history",
    "import-history": "history", "history-log": "history",
    "hint": "drill_reviews", "giveup": "drill_reviews", "rate-drill": "drill_reviews",
    "reset": "drill_reviews",
    "dev-check": "dev",
}
"""Which module of `studyapp.commands` registers each subcommand: a command line naming one
builds only that module's parsers (importing and building all six cost a daily `due` about
15 ms). A test checks this table against what the modules register."""
VALUED_GLOBALS = ("--vault", "--data-dir", "--now")


def _columns() -> int:
    """The terminal's width as `shutil.get_terminal_size` tells it ($COLUMNS, else the terminal,
    else 80), without importing shutil (and with it bz2, lzma and zlib: 3 ms of every command)."""
    try:
        columns = int(os.environ.get("COLUMNS", 0))
    except ValueError:
        columns = 0
    if columns <= 0:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns  # type: ignore[union-attr]
        except (AttributeError, ValueError, OSError):
            columns = 0
    return columns if columns > 0 else 80


class _Formatter(argparse.HelpFormatter):
    """argparse's help formatter, given the width it would ask shutil for (argparse builds one
    for every `add_argument`)."""

    def __init__(self, prog: str, indent_increment: int = 2, max_help_position: int = 24,
                 width: int | None = None) -> None:
        super().__init__(prog, indent_increment, max_help_position,
                         _columns() - 2 if width is None else width)


class _Parser(argparse.ArgumentParser):
    """An `ArgumentParser` with `_Formatter` unless told otherwise; subcommands' parsers too."""

    def __init__(self, *args, **kwargs) -> None:
        kwargs.setdefault("formatter_class", _Formatter)
        super().__init__(*args, **kwargs)


def _global_options() -> argparse.ArgumentParser:
    """Options accepted before or after any subcommand (`studyapp --vault V due` == `studyapp due --vault V`)."""
    common = _Parser(add_help=False)
    group = common.add_argument_group("global options")
    group.add_argument("--vault", metavar="DIR", default=argparse.SUPPRESS,
                       help="notes vault (default: configured vault, else <data dir>/vault seeded with the starter deck)")
    group.add_argument("--data-dir", metavar="DIR", default=argparse.SUPPRESS,
                       help="database, cache, config and drill workspace (default: $STUDYAPP_DATA_DIR or the platform data dir)")
    group.add_argument("--now", metavar="ISO-DATETIME", default=argparse.SUPPRESS,
                       help="freeze the clock at this instant, e.g. 2026-11-22 or 2026-11-22T09:30 (default: real time)")
    return common


def command_named(argv: Sequence[str]) -> str | None:
    """The subcommand `argv` names, if it names one before any option it does not know."""
    tokens = iter(argv)
    for token in tokens:
        if token in VALUED_GLOBALS:
            next(tokens, None)
        elif not token.startswith("-"):
            return token if token in COMMANDS else None
        elif not token.startswith(tuple(f"{name}=" for name in VALUED_GLOBALS)):
            return None  # --help, --version, a typo: the whole parser answers
    return None


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The parser for every subcommand, or, given `command`, for its module's only."""
    common = _global_options()
    parser = _Parser(
        prog="studyapp",
        description="Review your markdown interview notes with FSRS and practise graded PyTorch drills. "
        "With no command, opens the terminal app.",
        parents=[common],
    )
    parser.add_argument("--version", action="version", version=f"studyapp {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    modules = COMMAND_MODULES if command is None else (f"studyapp.commands.{COMMANDS[command]}",)
    for name in modules:
        importlib.import_module(name).register(sub, common)
    return parser


COLLECTING_COMMANDS = frozenset({"watch", "dev-check", "import", "import-history", "sync", "rebuild"})
"""Commands that can run for long (a watch loop, every drill's dev check, an import or replay
of a large history): the cyclic garbage collector stays on for them, as for the terminal app.
The others are short and build their objects in bulk (10,000 notes): the collector would
traverse them again and again, about 5 % of a warm `due` (benchmarks/vault_scale.py), to find
almost no cycles; reference counting still frees everything that is not in one."""


def _escape_unencodable(error: UnicodeError) -> tuple[str, int]:
    """What stdout's encoding cannot hold (an ASCII locale, `PYTHONIOENCODING=ascii`) is written
    as JSON's `\\uXXXX`: a title stays legible, `--json` output stays JSON, and a command that
    did its work is not failed by printing about it."""
    import json

    if not isinstance(error, UnicodeEncodeError):
        raise error
    return json.dumps(error.object[error.start:error.end])[1:-1], error.end


codecs.register_error("studyapp.escape", _escape_unencodable)


def run() -> int:
    """The program (`studyapp`, `python -m studyapp`): `main`, then its objects are set aside
    from the collector (`gc.freeze`), so that Python's exit skips its last full collection: a
    walk over every object the command made (10,000 notes), a tenth of a warm `due`
    (benchmarks/vault_scale.py). Exit still runs as usual (atexit, flushing, each module's
    clean-up). Not `main`: tests and other callers run it in a longer process.

    A SIGTERM (a `kill`, a closing terminal's session manager) ends a command as Ctrl-C does,
    by KeyboardInterrupt, so that what it was writing is put back in order on the way out (a
    review that displaced a note an editor was saving gives the note back), with 143."""
    import signal

    terminated: list[int] = []

    def on_term(signum: int, _frame) -> None:
        terminated.append(signum)
        raise KeyboardInterrupt

    if command_named(sys.argv[1:]) is not None and signal.getsignal(signal.SIGTERM) == signal.SIG_DFL:
        signal.signal(signal.SIGTERM, on_term)  # a command's: the app's own loop ends as it always did
    code = main()
    gc.freeze()
    return ExitCode.TERMINATED if terminated and code == ExitCode.INTERRUPTED else code


def main(argv: Sequence[str] | None = None) -> int:
    try:
        argv = sys.argv[1:] if argv is None else list(argv)
        if getattr(sys.stdout, "errors", None) == "strict" and hasattr(sys.stdout, "reconfigure"):
            sys.stdout.reconfigure(errors="studyapp.escape")
        command = command_named(argv)
        collecting = gc.isenabled()
        if command is not None and command not in COLLECTING_COMMANDS:
            gc.disable()
        try:
            return _run(argv, command)
        finally:
            if collecting:
                gc.enable()  # as it was: tests and other callers run main() in a longer process
    except KeyboardInterrupt:  # while the parser's modules import, or between two of its steps
        return ExitCode.INTERRUPTED
    except Exception as exc:
        if _made_of_interrupt(exc):
            return ExitCode.INTERRUPTED
        raise


def _say(line: str) -> None:
    """A line about the history on stderr; it can name another device's file, whose control
    characters are shown, not obeyed."""
    from studyapp.textwidth import shown

    print(f"studyapp: {shown(line)}", file=sys.stderr)


def _run(argv: list[str], command: str | None) -> int:
    parser = build_parser(command)
    args = parser.parse_args(argv)
    if sys.stdout is None:  # `studyapp due >&-`: Python found no stdout to write to
        print("studyapp: error: standard output is closed, so the output would be lost; nothing "
              "was done (redirect it to /dev/null to discard it)", file=sys.stderr)
        return ExitCode.FAILED  # as output cut short by a closed pipe
    handler = getattr(args, "handler", None)
    ctx = None
    forget_scan = None
    code: int | None = None
    output = None
    if handler is not None and not getattr(args, "interactive_output", False):
        output = sys.stdout = _KeptOutput(sys.stdout)
    try:
        from studyapp.context import build_context

        ctx = build_context(
            vault=getattr(args, "vault", None),
            data_dir=getattr(args, "data_dir", None),
            now=getattr(args, "now", None),
        )
        from studyapp.config import setting_warnings

        for warning in setting_warnings(ctx.settings, ctx.paths.config_file):
            print(f"studyapp: warning: {warning}", file=sys.stderr)
        if handler is None:
            from studyapp.commands import open_app

            return open_app(ctx)
        ctx.report = _say  # what opening the history found, whichever command opens it first
        if getattr(args, "scans_vault", False):
            from studyapp.vault.scan import forget_scan_ahead, start_scan_ahead

            start_scan_ahead(ctx.paths.vault_dir, ctx.paths.cache_file)
            forget_scan = forget_scan_ahead
        # a dry run writes nothing in the vault: not even the log folder of a first command
        guarded = getattr(args, "guard_history", True) and not getattr(args, "dry_run", False)
        if guarded:
            from studyapp.commands import warn_about_history

            warn_about_history(ctx)
        code = int(handler(args, ctx) or 0)
        if guarded:
            from studyapp.commands import remember_history

            remember_history(ctx)
        sys.stdout.flush()  # here, not at exit: a closed pipe is then seen below
        if output is not None and output.failure is not None:
            from studyapp.errors import os_reason

            # `scans_vault` (read-only) and `repeatable` commands: a second run repeats nothing
            done = ("run it again once it can be written" if getattr(args, "scans_vault", False)
                    or getattr(args, "repeatable", False) else "the command itself ran to its end, and "
                    "what it records is recorded (running it again would record it twice)")
            print(f"studyapp: error: the output could not be written ({os_reason(output.failure)}); "
                  f"{done}", file=sys.stderr)
            return ExitCode.FAILED
        return code
    except UserError as exc:
        print(f"studyapp: error: {exc}", file=sys.stderr)
        return exc.exit_code
    except ValueError as exc:  # bad --now, bad config
        print(f"studyapp: error: {exc}", file=sys.stderr)
        return ExitCode.USAGE
    except KeyboardInterrupt:
        return ExitCode.INTERRUPTED
    except BrokenPipeError:  # `studyapp due | head`: quiet, but the outcome is kept
        # The reader left: the command's own exit code when it has one (a grade that failed
        # still fails), else 1, since its output was cut short. stdout goes to /dev/null so
        # that Python's flush at exit does not fail again.
        _stdout_to_devnull()
        sys.stderr.close()
        return code if code is not None else ExitCode.FAILED
    except Exception as exc:  # OS and database failures: one line; anything else is a bug
        if _made_of_interrupt(exc):
            return ExitCode.INTERRUPTED
        message = user_message(exc, ctx.paths.database_file if ctx is not None else None)
        if message is None:
            if os.environ.get("STUDYAPP_DEBUG"):
                raise
            from studyapp.errors import report_bug

            data_dir = ctx.paths.data_dir if ctx is not None else None
            print(f"studyapp: error: {report_bug(exc, data_dir, argv)}", file=sys.stderr)
            return ExitCode.BUG
        print(f"studyapp: error: {message}", file=sys.stderr)
        return UserError.exit_code
    finally:
        if output is not None:
            sys.stdout = output.stream
            if output.failure is not None:
                _stdout_to_devnull()  # what is still buffered is dropped, not failed again at exit
        if forget_scan is not None:
            forget_scan()  # a scan started ahead and left unused: its child stopped and reaped


class _KeptOutput:
    """Standard output while a command runs: a write that fails (a full disk, an I/O error; not
    a closed pipe, which `_run` handles) is remembered and the rest of the output dropped, so
    that the command ends its work and `_run` says what happened. `rate > /dev/full` otherwise
    failed on printing the line of a review it had recorded, saying "try again"."""

    def __init__(self, stream) -> None:
        self.stream = stream
        self.failure: OSError | None = None

    def write(self, text: str) -> int:
        if self.failure is None:
            try:
                return self.stream.write(text)
            except BrokenPipeError:
                raise
            except OSError as exc:
                self.failure = exc
        return len(text)

    def flush(self) -> None:
        if self.failure is None:
            try:
                self.stream.flush()
            except BrokenPipeError:
                raise
            except OSError as exc:
                self.failure = exc

    def __getattr__(self, name: str):
        return getattr(self.stream, name)


def _stdout_to_devnull() -> None:
    """Standard output sent to /dev/null from here on: what is still buffered for an output
    that failed is dropped there, not written (and failed) again by Python's flush at exit."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):
        pass


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
