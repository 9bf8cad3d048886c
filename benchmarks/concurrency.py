"""Lost edits and lost reviews when a note is edited and reviewed by several processes at once.

Run: python benchmarks/concurrency.py [--edits 2000] [--reviews 100] [--cli 5] [--pause-ms 2]
                                      [--json]

Real processes, all on one note:
  - an editor that, in a tight loop, alternately appends a line in place (open, append, close)
    and saves by atomic replace (read, write a temp file, rename it over the note, the way
    careful editors do: only if the note did not change since it read it);
  - reviewer A, a long-lived review service (as the TUI keeps one) rating and undoing;
  - reviewer B, a second long-lived service rating the same note;
  - a few real `studyapp rate` CLI processes.
Every edit adds a unique line. Afterwards: lost edits = edit lines missing from the note;
lost reviews = reviews that succeeded but are missing from the database or from the note's
`review_count`; duplicate reviews = rows beyond what succeeded. Goal (issue 9): 0 and 0.

No program can stop another from overwriting a file: an editor that checks the note, is then
paused by the OS, and renames its copy over a review written meanwhile loses that review. The
editor here swaps its copy in with an exchange instead of a rename (the same effect) so it can
count such overwrites of its own (`editor_overwrote`); `lost_reviews_by_studyapp` leaves them out.
The load average is printed with the figures.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
NOTE = "a.md"
INITIAL_COUNT = 3
NOTE_TEXT = f"""---
created: '2026-03-02'
last_reviewed: '2026-03-20'
next_review: '2026-03-25'
review_count: {INITIAL_COUNT}
difficulty: medium
mastery_level: 0.2
tags:
- 归一化
---
# 层归一化与批归一化的区别

## 面试标准答案

批归一化在批维度上统计，层归一化在特征维度上统计。

## 编辑记录
"""


# -- the roles, each run as its own process ---------------------------------------------------

def run_editor(vault: Path, edits: int, pause: float, stop_file: Path, log: Path) -> None:
    """Edit until `edits` are done and the reviewers have finished; log how many were made."""
    path = vault / NOTE
    temp = vault / f".{NOTE}.editor-swap"
    swap = _exchange_function()
    done = overwrote = 0
    while done < edits or not stop_file.exists():
        line = f"edit {done}\n".encode()
        if done % 2 == 0:
            with open(path, "ab") as fh:
                fh.write(line)
        else:
            while True:
                before = os.stat(path)
                raw = path.read_bytes()
                temp.write_bytes(raw + line)
                now = os.stat(path)
                if (now.st_ino, now.st_size, now.st_mtime_ns) == (
                        before.st_ino, before.st_size, before.st_mtime_ns):
                    break
            if swap is not None and swap(temp, path):
                # Same effect as a rename over the note, but what it replaced can be compared
                # with what the editor read: the editor's own race, when it lost a write.
                overwrote += temp.read_bytes() != raw
                temp.unlink()
            else:
                os.replace(temp, path)
        done += 1
        time.sleep(pause)
    log.write_text(json.dumps({"edits": done, "editor_overwrote": overwrote}))


def _exchange_function():
    """renameat2(RENAME_EXCHANGE) on Linux, else None."""
    if not sys.platform.startswith("linux"):
        return None
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    if not hasattr(libc, "renameat2"):
        return None
    return lambda a, b: libc.renameat2(-100, os.fsencode(a), -100, os.fsencode(b), 2) == 0


def run_reviewer(vault: Path, data: Path, reviews: int, undo_every: int, log: Path) -> None:
    """Rate the note `reviews` times through one long-lived service, undoing every Nth."""
    sys.path.insert(0, str(REPO))
    from studyapp.context import build_context
    from studyapp.errors import UserError
    from studyapp.reviews import ReviewService

    ctx = build_context(vault=str(vault), data_dir=str(data), seed=False)
    recorded = undone = 0
    failures: list[str] = []
    with ReviewService(ctx) as service:
        service.load()
        for k in range(reviews):
            try:
                service.record_review(NOTE, ("again", "hard", "good", "easy")[k % 4])
                recorded += 1
                if undo_every and k % undo_every == undo_every - 1:
                    service.undo_last()
                    undone += 1
            except UserError as exc:
                failures.append(str(exc))
    log.write_text(json.dumps({"recorded": recorded, "undone": undone, "failures": failures}))


def run_cli(vault: Path, data: Path, times: int, log: Path) -> None:
    """Rate the note through the real CLI, one process per rating."""
    env = dict(os.environ, PYTHONPATH=str(REPO))
    recorded, failures = 0, []
    for _ in range(times):
        proc = subprocess.run([sys.executable, "-m", "studyapp", "rate", NOTE, "--rating", "good",
                               "--vault", str(vault), "--data-dir", str(data)],
                              env=env, capture_output=True, text=True, check=False)
        if proc.returncode == 0:
            recorded += 1
        else:
            failures.append(proc.stderr.strip()[-300:])
    log.write_text(json.dumps({"recorded": recorded, "undone": 0, "failures": failures}))


# -- the harness -------------------------------------------------------------------------------

def measure(edits: int, reviews: int, cli: int, pause_ms: float, workdir: Path) -> dict:
    """Run the loop once in `workdir`; returns the counts."""
    vault, data = workdir / "vault", workdir / "data"
    vault.mkdir(parents=True)
    (vault / NOTE).write_text(NOTE_TEXT, encoding="utf-8")
    env = dict(os.environ, PYTHONPATH=str(REPO))
    me = [sys.executable, str(Path(__file__).resolve())]
    # The database exists before the race starts (creating it is not what is measured).
    subprocess.run([sys.executable, "-m", "studyapp", "due", "--vault", str(vault),
                    "--data-dir", str(data)], env=env, check=True, capture_output=True)
    stop = workdir / "reviewers-done"
    logs = {name: workdir / f"{name}.json" for name in ("editor", "a", "b", "cli")}
    a_reviews = reviews - reviews // 2 - cli
    started = time.monotonic()
    editor = subprocess.Popen(me + ["--role", "editor", str(vault), str(edits),
                                    str(pause_ms / 1000), str(stop),
                                    str(logs["editor"])], env=env)
    reviewers = [
        subprocess.Popen(me + ["--role", "reviewer", str(vault), str(data), str(a_reviews), "4",
                               str(logs["a"])], env=env),
        subprocess.Popen(me + ["--role", "reviewer", str(vault), str(data), str(reviews // 2),
                               "0", str(logs["b"])], env=env),
        subprocess.Popen(me + ["--role", "cli", str(vault), str(data), str(cli),
                               str(logs["cli"])], env=env),
    ]
    codes = [p.wait() for p in reviewers]
    stop.touch()
    codes.append(editor.wait())
    seconds = time.monotonic() - started
    if any(codes):
        raise SystemExit(f"a process of the benchmark failed: exit codes {codes}")
    editor_log = json.loads(logs["editor"].read_text())
    made = editor_log["edits"]
    sides = [json.loads(logs[name].read_text()) for name in ("a", "b", "cli")]
    recorded = sum(s["recorded"] for s in sides)
    undone = sum(s["undone"] for s in sides)
    failures = [f for s in sides for f in s["failures"]]
    result = {"seconds": round(seconds, 1), "edits": made, "recorded": recorded,
              "undone": undone, "failures": failures, **_audit(vault, data, made, recorded - undone)}
    # A review the editor itself overwrote (it replaced the note after checking it, with a
    # review landing in between) is the editor's lost update, not studyapp's.
    result["editor_overwrote"] = editor_log["editor_overwrote"]
    result["lost_reviews_by_studyapp"] = max(0, result["lost_reviews"] - result["editor_overwrote"])
    return result


def _audit(vault: Path, data: Path, edits: int, expected_reviews: int) -> dict:
    """Compare the note and the database with what the processes say they did."""
    sys.path.insert(0, str(REPO))
    from studyapp.store import Store
    from studyapp.vault import Vault

    note = Vault(vault).read_note(NOTE)
    text = (vault / NOTE).read_text(encoding="utf-8")
    present = set(text.splitlines())
    lost_edits = sum(f"edit {i}" not in present for i in range(edits))
    duplicated_edits = sum(text.count(f"edit {i}\n") > 1 for i in range(edits))
    with Store(data / "studyapp.sqlite3") as store:
        in_db = store.review_count()
        pending = len(store.journal())
        last = store.last_review()
    in_note = note.review_count - INITIAL_COUNT
    lost_reviews = max(0, expected_reviews - in_db) + abs(in_note - in_db)
    agree = in_note == in_db
    if last is not None:  # the note's dates are the ones the database's last review wrote
        reviewed = last.reviewed_at.astimezone().date()
        due = last.due_after.astimezone().date()
        agree = agree and note.last_reviewed == reviewed and note.next_review == max(due, reviewed)
    return {"lost_edits": lost_edits, "duplicated_edits": duplicated_edits,
            "reviews_in_db": in_db, "reviews_in_note": in_note,
            "lost_reviews": lost_reviews, "duplicate_reviews": max(0, in_db - expected_reviews),
            "journal_left": pending, "note_and_db_agree": agree}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--edits", type=int, default=2000, help="external edits, at least")
    parser.add_argument("--reviews", type=int, default=100, help="reviews recorded in all")
    parser.add_argument("--cli", type=int, default=5, help="of which through `studyapp rate`")
    parser.add_argument("--pause-ms", type=float, default=2.0,
                        help="the editor's pause between two edits (it saves every few ms)")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--role", nargs="+", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.role:
        role, *rest = args.role
        if role == "editor":
            run_editor(Path(rest[0]), int(rest[1]), float(rest[2]), Path(rest[3]), Path(rest[4]))
        elif role == "reviewer":
            run_reviewer(Path(rest[0]), Path(rest[1]), int(rest[2]), int(rest[3]), Path(rest[4]))
        else:
            run_cli(Path(rest[0]), Path(rest[1]), int(rest[2]), Path(rest[3]))
        return 0
    with tempfile.TemporaryDirectory(prefix="studyapp-concurrency-") as tmp:
        result = measure(args.edits, args.reviews, args.cli, args.pause_ms, Path(tmp))
    result["load_average"] = [round(x, 2) for x in os.getloadavg()]
    if args.json:
        print(json.dumps(result, ensure_ascii=False))
    else:
        print(f"{result['edits']} external edits, {result['recorded']} reviews recorded "
              f"({result['undone']} undone), {result['seconds']} s")
        print(f"lost edits: {result['lost_edits']}   lost reviews: {result['lost_reviews']} "
              f"(by studyapp: {result['lost_reviews_by_studyapp']}, overwritten by the editor "
              f"itself: {result['editor_overwrote']})   "
              f"duplicate reviews: {result['duplicate_reviews']}   "
              f"note and database agree: {result['note_and_db_agree']}")
        if result["failures"]:
            print(f"{len(result['failures'])} reviews refused, e.g. {result['failures'][0]}")
        print(f"load average: {result['load_average']}")
    ok = result["lost_edits"] == 0 and result["lost_reviews_by_studyapp"] == 0
    return 0 if ok and result["duplicate_reviews"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
