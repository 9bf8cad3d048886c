"""Drill commands: drills, start, grade, watch. They parse, call `studyapp.drills` (the
service the TUI calls too) and print; grading happens in the grader's worker process, the
only one that imports torch.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from studyapp import drills
from studyapp.errors import ExitCode, UsageError
from studyapp.textwidth import shown

DEVICES = ("auto", "cpu", "cuda")


def register(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("drills", parents=[common], help="list the graded PyTorch drills and your progress")
    p.add_argument("--json", action="store_true", help="print a JSON array")
    p.set_defaults(handler=list_drills, scans_vault=True)  # read-only; loads the vault first

    p = sub.add_parser("start", parents=[common], help="write a drill's starter file into your workspace")
    p.add_argument("drill", help="drill id (see `studyapp drills`)")
    p.add_argument("--workspace", metavar="DIR", help="where drill files go (default: <data dir>/workspace)")
    p.set_defaults(handler=start_drill, repeatable=True)  # never overwrites

    p = sub.add_parser("grade", parents=[common], help="grade your solution files against the reference kernels")
    p.add_argument("drill", help="drill id (see `studyapp drills`)")
    p.add_argument("files", nargs="+", metavar="FILE", help="Python files defining the drill's function or class")
    _grading_options(p)
    p.add_argument("--json", action="store_true", help="print a JSON array, one verdict per file in order")
    p.set_defaults(handler=grade_files)

    p = sub.add_parser("watch", parents=[common], help="re-grade a drill file every time you save it")
    p.add_argument("drill", help="drill id (see `studyapp drills`)")
    p.add_argument("file", nargs="?", metavar="FILE", help="default: <workspace>/<drill>.py")
    p.add_argument("--workspace", metavar="DIR", help="where drill files go (default: <data dir>/workspace)")
    _grading_options(p)
    # runs until Ctrl-C: an output that fails stops it (cli._KeptOutput would keep it running unseen)
    p.set_defaults(handler=watch_drill, interactive_output=True)


def _grading_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--device", choices=DEVICES, default="auto",
                   help="where your code runs: auto uses CUDA when available (default: auto)")
    p.add_argument("--timeout", type=_timeout, metavar="S",
                   help="seconds each file may run (default: grader_timeout in config.toml, 10)")
    p.add_argument("--seed", type=_seed, metavar="N",
                   help="seed of the fresh random cases (default: a new one each run; every verdict "
                        "shows its seed, so `--seed N` reproduces it)")


def _timeout(text: str) -> float:
    """Seconds, in the range config.toml's `grader_timeout` allows (inf would overflow the wait)."""
    from studyapp.config import RANGES

    low, high, words = RANGES["grader_timeout"]
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}") from None
    if not low <= value <= high:  # also refuses nan
        raise argparse.ArgumentTypeError(f"{words}, got {text}")
    return value


def _seed(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if not 0 <= value < 1 << 63:
        raise argparse.ArgumentTypeError(f"out of range (0 to 2**63 - 1): {text}")
    return value


def _workspace(args, ctx) -> Path:
    return Path(args.workspace).expanduser() if getattr(args, "workspace", None) else ctx.paths.workspace_dir


def list_drills(args, ctx) -> int:
    from studyapp.commands.drill_reviews import progress_bar, progress_by_drill

    status = drills.status_without_store(ctx.paths)
    notes: list = []
    paired = drills.paired_notes(ctx, on_problem=lambda problem: print(
        f"studyapp: skipped {problem.path}: {problem.reason}", file=sys.stderr), notes_out=notes)
    progress = progress_by_drill(ctx, notes)
    rows = [{"id": info.id, "title": info.title, "tags": list(info.tags), "entry": info.entry,
             "status": status.get(info.id, drills.NOT_STARTED), "statement": info.statement,
             "notes": paired.get(info.id, []), **_progress_fields(progress.get(info.id))}
            for info in drills.catalog(ctx.paths.drill_memo_file).values()]
    if args.json:
        print(json.dumps(rows, indent=2, ensure_ascii=False))
        return ExitCode.OK
    width = max(len(r["id"]) for r in rows)
    for r in rows:
        due = "due now" if r["due_now"] else (r["next_due"] or "-")
        print(f"{r['id']:<{width}}  {r['status']:<11}  {due:<10}  {r['passes']}/{r['attempts']:<3} "
              f"{r['title']}  [{', '.join(r['tags'])}]  {len(r['notes'])} note(s)")
    print(progress_bar(sum(r["status"] == "passed" for r in rows), len(rows)))
    return ExitCode.OK


def _progress_fields(progress) -> dict:
    """A drill's review fields in `drills --json`: next due date, due now, passes/attempts."""
    if progress is None:
        return {"next_due": None, "due_now": False, "passes": 0, "attempts": 0}
    return {"next_due": progress.next_due.isoformat() if progress.next_due else None,
            "due_now": progress.due_now, "passes": progress.passes, "attempts": progress.attempts}


def start_drill(args, ctx) -> int:
    info = drills.drill(args.drill)
    if not getattr(args, "workspace", None):  # a due drill: a try starts, from a fresh starter
        from studyapp.commands.drill_reviews import drill_reviews

        with drill_reviews(ctx) as reviews:
            if reviews.in_review(info.id):
                path, backup = reviews.begin(info.id)
                if backup is not None:
                    print(f"your previous file is kept as {backup}", file=sys.stderr)
                print(path)
                return ExitCode.OK
    target, created = drills.starter_file(info.id, _workspace(args, ctx))
    if not created:
        print(f"{target} already exists; left as it is", file=sys.stderr)
    print(target)
    return ExitCode.OK


NOT_A_RUN_STARTER = "  (the starter as `studyapp start` wrote it: not counted as a run)"
"""Said under the verdict of an untouched starter, which is graded but not recorded."""
SAME_RUN = "  (the same code as your last run: not counted again)"
"""Said under the verdict of the drill's last run graded again (another watcher, `grade` on an
unchanged file): shown, but not recorded again (`drills.repeats_last_run`)."""


def _record(ctx, verdict: Mapping[str, Any], untouched_starter: bool = False) -> str | None:
    """Record a graded run; returns the line that says why it was not counted, if it was not
    and the learner should know: the untouched starter failing (`drills.is_learner_run`), or
    the last run graded again. A verdict that ran none of their code is neither, and says so."""
    if not drills.is_learner_run(dict(verdict), untouched_starter):
        return NOT_A_RUN_STARTER if untouched_starter else None
    recorded = drills.record_attempt_alone(ctx, dict(verdict))
    if recorded.warning is not None:
        print(f"studyapp: warning: {recorded.warning}", file=sys.stderr)
    return None if recorded.counted else SAME_RUN


def grade_files(args, ctx) -> int:
    drills.drill(args.drill)
    missing = [f for f in args.files if not Path(f).exists()]
    if missing:
        raise UsageError(f"no such file: {', '.join(missing)}")
    not_files = [f for f in args.files if not Path(f).is_file()]
    if not_files:
        raise UsageError(f"not a file: {', '.join(not_files)}")
    results = []
    with drills.new_grader_client(ctx.settings, timeout=args.timeout) as client:
        client.start()  # torch imports in the worker while we get on
        for file in args.files:
            verdict = client.grade(args.drill, file, device=args.device, seed=args.seed)
            untouched = drills.is_untouched_starter(args.drill, Path(file))
            not_counted = _record(ctx, verdict, untouched)
            results.append(verdict)
            if not args.json:
                print(format_verdict(verdict), flush=True)
                if not_counted:
                    print(not_counted, flush=True)
    if args.json:
        print(json.dumps(results, indent=2))
    else:
        from studyapp.commands.drill_reviews import proposal_line

        line = proposal_line(ctx, args.drill)
        if line:
            print(line)
    return ExitCode.OK if all(v["status"] == "pass" for v in results) else ExitCode.FAILED


WATCH_POLL = 1.0
"""Seconds between two looks at the watched file when no event came: a save the file watcher
missed (a folder removed and made again, a link pointed elsewhere) is still seen."""
SETTLE = 0.2
"""Seconds a changed file must hold still before it is graded (an editor may write it in parts)."""


def watch_drill(args, ctx) -> int:
    info = drills.drill(args.drill)
    path = Path(args.file) if args.file else _workspace(args, ctx) / f"{info.id}.py"
    if not path.exists():
        hint = f" (create it with `studyapp start {info.id}`)" if not args.file else ""
        raise UsageError(f"no such file: {path}{hint}")
    if not path.is_file():
        raise UsageError(f"not a regular file: {path} (a folder, a FIFO or a device); watch the .py file "
                         "you save your solution in")
    # Absolute, not resolved: a link that an editor's save replaces, or that is pointed
    # elsewhere, is followed as it is at each grade.
    path = path.absolute()
    with drills.new_grader_client(ctx.settings, timeout=args.timeout) as client:
        client.start()
        try:
            first = True
            while True:
                verdict, graded = _grade_as_it_is(client, info.id, path, args)
                untouched = drills.is_untouched_starter(info.id, path)
                not_counted = _record(ctx, verdict, untouched)
                if not first:
                    _clear_terminal()
                first = False
                print(format_verdict(verdict), flush=True)
                if not_counted:
                    print(not_counted, flush=True)
                if not_counted != NOT_A_RUN_STARTER and verdict["status"] == "pass":
                    from studyapp.commands.drill_reviews import proposal_line

                    line = proposal_line(ctx, info.id)
                    if line:
                        print(line, flush=True)
                print(f"\nwatching {shown(str(path))} (Ctrl-C to stop)", flush=True)
                _wait_for_change(path, graded)
        except KeyboardInterrupt:
            print()
            return ExitCode.OK


def _grade_as_it_is(client, drill_id: str, path: Path, args) -> tuple[Mapping[str, Any], tuple | None]:
    """Grade the file until a grade ran on a file that held still meanwhile; returns the verdict
    and the file's signature it is about. A verdict of a file saved while it was graded may be of
    the older file, or of one half-written: it is neither shown nor recorded, and the file as it
    is now is graded instead."""
    while True:
        before = _signature(path)
        verdict = client.grade(drill_id, path, device=args.device, seed=args.seed)
        after = _signature(path)
        if after == before:
            return verdict, before
        if after is None:  # gone (or no longer a file): wait for it to come back
            _wait_for_change(path, None)
        else:
            _hold_still(path, after)


def _signature(path: Path) -> tuple | None:
    """What changes whenever the file's content may have: None when it is not a regular file."""
    import stat

    try:
        info = os.stat(path)
    except OSError:
        return None
    if not stat.S_ISREG(info.st_mode):
        return None
    from studyapp.atomic import file_identity

    return file_identity(info)


HOLD_STILL_LIMIT = 3.0
"""The longest `_hold_still` waits: a file saved on without a pause is graded as it is then."""


def _hold_still(path: Path, signature: tuple | None) -> None:
    """Wait until the file has not changed for `SETTLE` seconds (at most `HOLD_STILL_LIMIT`)."""
    deadline = time.monotonic() + HOLD_STILL_LIMIT
    while time.monotonic() < deadline:
        time.sleep(SETTLE)
        now = _signature(path)
        if now == signature:
            return
        signature = now


def _wait_for_change(path: Path, seen: tuple | None) -> None:
    """Return once the file is a regular file whose signature is not `seen`, and holds still.
    Events from the file watcher wake us at once; a look every `WATCH_POLL` seconds catches what
    it cannot see (its folder removed and made again, a link pointed elsewhere), and where no
    watcher can start (the folder is gone), looking is all there is."""
    import watchfiles

    def changed() -> bool:
        now = _signature(path)
        if now is None or now == seen:
            return False
        _hold_still(path, now)
        return True

    if changed():  # saved while the verdict was being printed or recorded
        return
    folders = {path.parent}
    try:
        folders.add(path.resolve().parent)
    except OSError:
        pass
    names = {str(path), str(path.resolve())}
    while True:
        existing = sorted(folder for folder in folders if folder.is_dir())
        if existing:
            try:
                for _ in watchfiles.watch(*existing, debounce=200, rust_timeout=int(WATCH_POLL * 1000),
                                          yield_on_timeout=True, recursive=False, ignore_permission_denied=True,
                                          watch_filter=lambda _, name: name in names):
                    if changed():
                        return
            except (OSError, RuntimeError, ValueError):  # its folder went meanwhile, or too many watches
                pass
        time.sleep(WATCH_POLL)
        if changed():
            return


def _clear_terminal() -> None:
    """Start the next verdict on a clean screen, as test watchers do; piped output stays plain."""
    if sys.stdout.isatty():
        sys.stdout.write("\x1b[H\x1b[2J\x1b[3J")
        sys.stdout.flush()


def format_verdict(verdict: Mapping[str, Any]) -> str:
    """A verdict for people: status line, summary, checks table, hint, detail, output. Every
    text in it can come from learner code, so each line is shown as text (`shown`): an escape
    sequence it prints cannot clear the terminal and draw a fake PASS."""
    label = {"pass": "PASS", "fail": "FAIL", "error": "ERROR"}.get(verdict["status"], verdict["status"].upper())
    seed = f", seed {verdict['seed']}" if verdict.get("seed") is not None else ""
    lines = [f"{label}  {shown(verdict['file'])}  ({verdict['drill']}, {verdict['device']}, {verdict['seconds']:.2f} s{seed})",
             f"  {verdict['summary']}"]
    checks = verdict.get("checks") or []
    if checks:
        width = max(len(c["name"]) for c in checks)
        for c in checks:
            message = f"  {c['message']}" if c.get("message") else ""
            lines.append(f"    {c['status']:<4}  {c['name']:<{width}}  {c['tier']:<5}{message}")
    if verdict.get("hint"):
        first, *more = verdict["hint"].splitlines() or [""]
        lines.append(f"  hint: {first}")
        lines += ["        " + line for line in more]  # a traceback's lines stay in the block
    if verdict.get("detail"):
        lines += ["  " + line for line in verdict["detail"].splitlines()]
    if verdict.get("output"):
        lines.append("  output:")
        lines += ["    " + line for line in verdict["output"].splitlines()]
    # A line break inside a text (an exception's message) goes on indented: only the status
    # line starts at column 0, so no text can draw one there.
    lines = [("" if i == 0 else "    ") + shown(piece)
             for line in lines for i, piece in enumerate(line.splitlines() or [""])]
    return "\n".join(lines)
