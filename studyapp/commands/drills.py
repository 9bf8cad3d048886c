"""Drill commands: drills, start, grade, watch.

Listing drills reads the torch-free catalog; grading goes through `GraderClient`, whose worker
process is the only one that imports torch.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from studyapp.errors import ExitCode, UsageError

DEVICES = ("auto", "cpu", "cuda")


def register(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("drills", parents=[common], help="list the graded PyTorch drills and your progress")
    p.add_argument("--json", action="store_true", help="print a JSON array")
    p.set_defaults(handler=list_drills)

    p = sub.add_parser("start", parents=[common], help="write a drill's starter file into your workspace")
    p.add_argument("drill", help="drill id (see `studyapp drills`)")
    p.add_argument("--workspace", metavar="DIR", help="where drill files go (default: <data dir>/workspace)")
    p.set_defaults(handler=start_drill)

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
    p.set_defaults(handler=watch_drill)


def _grading_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--device", choices=DEVICES, default="auto",
                   help="where your code runs: auto uses CUDA when available (default: auto)")
    p.add_argument("--timeout", type=float, metavar="S",
                   help="seconds each file may run (default: grader_timeout in config.toml, 10)")
    p.add_argument("--seed", type=_seed, metavar="N",
                   help="seed of the fresh random cases (default: a new one each run; every verdict "
                        "shows its seed, so `--seed N` reproduces it)")


def _seed(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if not 0 <= value < 1 << 63:
        raise argparse.ArgumentTypeError(f"out of range (0 to 2**63 - 1): {text}")
    return value


def _catalog() -> dict:
    from studyapp.kernels_loader import load_kernels

    load_kernels()
    from studyapp_kernels.catalog import CATALOG  # torch-free

    return CATALOG


def _drill_info(drill_id: str):
    catalog = _catalog()
    if drill_id not in catalog:
        raise UsageError(f"unknown drill {drill_id!r}; choose from: {', '.join(catalog)}")
    return catalog[drill_id]


def _workspace(args, ctx) -> Path:
    return Path(args.workspace).expanduser() if getattr(args, "workspace", None) else ctx.paths.workspace_dir


def list_drills(args, ctx) -> int:
    from studyapp.grader.attempts import drill_status

    status = drill_status(ctx.paths)
    paired = _paired_notes(ctx)
    rows = [{"id": info.id, "title": info.title, "tags": list(info.tags), "entry": info.entry,
             "status": status.get(info.id, "not started"), "statement": info.statement,
             "notes": paired.get(info.id, [])}
            for info in _catalog().values()]
    if args.json:
        print(json.dumps(rows, indent=2, ensure_ascii=False))
        return ExitCode.OK
    width = max(len(r["id"]) for r in rows)
    for r in rows:
        print(f"{r['id']:<{width}}  {r['status']:<11}  {r['title']}  [{', '.join(r['tags'])}]"
              f"  {len(r['notes'])} note(s)")
    return ExitCode.OK


def _paired_notes(ctx) -> dict[str, list[str]]:
    """Drill id -> paths of the vault's notes it trains (declared or suggested pairings)."""
    from studyapp.pairing import notes_by_drill
    from studyapp.vault import Vault

    vault = Vault(ctx.paths.vault_dir, cache_file=ctx.paths.cache_file)
    snapshot = vault.load()
    for problem in snapshot.problems:
        print(f"studyapp: skipped {problem.path}: {problem.reason}", file=sys.stderr)
    return notes_by_drill(vault.pairings(snapshot.notes))  # bodies read once, then cached


def start_drill(args, ctx) -> int:
    info = _drill_info(args.drill)
    target = _workspace(args, ctx) / f"{info.id}.py"
    if target.exists():
        print(f"{target} already exists; left as it is", file=sys.stderr)
    else:
        _write_new_file(target, info.starter_path.read_bytes())
    print(target)
    return ExitCode.OK


def _write_new_file(target: Path, content: bytes) -> None:
    """Write atomically and never replace a file that appeared meanwhile (link fails if it exists)."""
    target.parent.mkdir(parents=True, exist_ok=True)
    temp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    with open(temp, "wb") as out:
        out.write(content)
        out.flush()
        os.fsync(out.fileno())
    try:
        os.link(temp, target)
    except FileExistsError:
        print(f"{target} already exists; left as it is", file=sys.stderr)
    finally:
        temp.unlink()


def _client(args, ctx):
    from dataclasses import replace

    from studyapp.grader.client import GraderClient
    from studyapp.grader.contract import GradeLimits

    if args.timeout is not None and not args.timeout > 0:
        raise UsageError("--timeout must be a positive number of seconds")
    limits = GradeLimits.from_settings(ctx.settings)
    return GraderClient(limits if args.timeout is None else replace(limits, timeout=args.timeout))


def grade_files(args, ctx) -> int:
    from studyapp.grader.attempts import record_attempt

    _drill_info(args.drill)
    missing = [f for f in args.files if not Path(f).is_file()]
    if missing:
        raise UsageError(f"no such file: {', '.join(missing)}")
    results = []
    with _client(args, ctx) as client:
        client.start()  # torch imports in the worker while we get on
        for file in args.files:
            verdict = client.grade(args.drill, file, device=args.device, seed=args.seed)
            record_attempt(ctx, verdict)
            results.append(verdict)
            if not args.json:
                print(format_verdict(verdict), flush=True)
    if args.json:
        print(json.dumps(results, indent=2))
    return ExitCode.OK if all(v["status"] == "pass" for v in results) else ExitCode.FAILED


def watch_drill(args, ctx) -> int:
    import watchfiles

    from studyapp.grader.attempts import record_attempt

    info = _drill_info(args.drill)
    path = Path(args.file) if args.file else _workspace(args, ctx) / f"{info.id}.py"
    if not path.is_file():
        hint = f" (create it with `studyapp start {info.id}`)" if not args.file else ""
        raise UsageError(f"no such file: {path}{hint}")
    path = path.resolve()
    with _client(args, ctx) as client:
        client.start()
        try:
            first = True
            while True:
                verdict = client.grade(info.id, path, device=args.device, seed=args.seed)
                record_attempt(ctx, verdict)
                if not first:
                    _clear_terminal()
                first = False
                print(format_verdict(verdict), flush=True)
                print(f"\nwatching {path} (Ctrl-C to stop)", flush=True)
                for _changes in watchfiles.watch(path.parent, debounce=200, rust_timeout=0,
                                                watch_filter=lambda _, changed: Path(changed).resolve() == path):
                    if path.is_file():
                        break
        except KeyboardInterrupt:
            print()
            return ExitCode.OK


def _clear_terminal() -> None:
    """Start the next verdict on a clean screen, as test watchers do; piped output stays plain."""
    if sys.stdout.isatty():
        sys.stdout.write("\x1b[H\x1b[2J\x1b[3J")
        sys.stdout.flush()


def format_verdict(verdict: dict) -> str:
    """A verdict for people: status line, summary, checks table, hint, detail, output."""
    label = {"pass": "PASS", "fail": "FAIL", "error": "ERROR"}.get(verdict["status"], verdict["status"].upper())
    seed = f", seed {verdict['seed']}" if verdict.get("seed") is not None else ""
    lines = [f"{label}  {verdict['file']}  ({verdict['drill']}, {verdict['device']}, {verdict['seconds']:.2f} s{seed})",
             f"  {verdict['summary']}"]
    checks = verdict.get("checks") or []
    if checks:
        width = max(len(c["name"]) for c in checks)
        for c in checks:
            message = f"  {c['message']}" if c.get("message") else ""
            lines.append(f"    {c['status']:<4}  {c['name']:<{width}}  {c['tier']:<5}{message}")
    if verdict.get("hint"):
        lines.append(f"  hint: {verdict['hint']}")
    if verdict.get("detail"):
        lines += ["  " + line for line in verdict["detail"].splitlines()]
    if verdict.get("output"):
        lines.append("  output:")
        lines += ["    " + line for line in verdict["output"].splitlines()]
    return "\n".join(lines)
