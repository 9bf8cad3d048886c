"""Developer commands: `studyapp dev-check [DRILL...]`, the dev check of the drill folders.

For drill authors, like `rustlings dev check`: it runs `kernels/dev_check.py` (the checks the
suite runs in tests/test_drill_folders.py) on the bundled folders, or on another kernels/ tree,
in this process. It grades the folders' own starters, references and banks, trusted files; a
learner's file is only ever graded by `studyapp grade`, in the sandbox.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from studyapp.errors import ExitCode, UsageError


def register(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser(
        "dev-check", parents=[common],
        help="for drill authors: check drill folders (starter fails, reference and bank/right pass, "
             "each bank/wrong file is diagnosed as its mistake)")
    p.add_argument("drills", nargs="*", metavar="DRILL", help="drill ids (default: every drill)")
    p.add_argument("--seeds", type=_seed_count, default=20, metavar="N",
                   help="grade every file on seeds 0..N-1 (default: 20, what the suite uses)")
    p.add_argument("--kernels", metavar="DIR",
                   help="a kernels/ folder to check instead of the bundled one (e.g. a checkout's)")
    p.set_defaults(handler=dev_check, guard_history=False)


def _seed_count(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if not 1 <= value <= 1000:
        raise argparse.ArgumentTypeError(f"out of range (1 to 1000): {text}")
    return value


def dev_check(args, ctx) -> int:
    """One line per drill (ok / FAIL, files, seconds), its problems indented below it."""
    from studyapp.kernels_loader import load_kernels

    root = Path(args.kernels).expanduser() if args.kernels else None
    if root is not None and not (root / "__init__.py").is_file():
        raise UsageError(f"{root} is not a kernels folder (it has no __init__.py)")
    try:
        load_kernels(root)
        from studyapp_kernels.catalog import CATALOG
        from studyapp_kernels.dev_check import check_drills
    except ValueError as exc:  # a drill.toml that does not read stops the catalog itself
        print(f"FAIL  {exc}")
        return ExitCode.FAILED
    folders = {drill_id: info.folder for drill_id, info in CATALOG.items()}  # in list order
    unknown = [name for name in args.drills if name not in folders]
    if unknown:
        raise UsageError(f"unknown drill {', '.join(map(repr, unknown))}; choose from: {', '.join(folders)}")
    chosen = [folders[name] for name in dict.fromkeys(args.drills)] or list(folders.values())
    if not chosen:
        print(f"FAIL  no drill folder under {root or 'the bundled kernels'}")
        return ExitCode.FAILED
    seeds = tuple(range(args.seeds))
    width = max(len(folder.name) for folder in chosen)
    failed = 0
    for report in check_drills(chosen, seeds):
        status = "ok" if report.ok else "FAIL"
        print(f"{status:<4}  {report.drill_id:<{width}}  {report.files} files x {len(seeds)} seeds  "
              f"{report.seconds:.1f} s", flush=True)
        for problem in report.problems:
            print(f"      {problem}", flush=True)
        failed += not report.ok
    if failed:
        print(f"studyapp: {failed} of {len(chosen)} drill(s) fail the dev check", file=sys.stderr)
    return ExitCode.FAILED if failed else ExitCode.OK
