"""Where graded attempts are recorded and drill progress is read back.

The review database (`studyapp.store.Store`, from the scheduling work) owns `drill_attempts`;
until it is on this branch, attempts go to a JSON-lines file in the data dir. This module is the
one place to switch.
"""

from __future__ import annotations

import json
import os
from datetime import datetime


def _store_class():
    try:
        from studyapp.store import Store
    except ImportError:
        return None
    return Store if hasattr(Store, "record_drill_attempt") else None


def _interim_file(paths):
    return paths.data_dir / "drill_attempts.jsonl"


def record_attempt(paths, verdict: dict, when: datetime) -> None:
    """Log one graded submission (status, summary, time taken, file)."""
    store_class = _store_class()
    if store_class is not None:
        with store_class.open(paths) as store:
            store.record_drill_attempt(
                verdict["drill"], verdict["status"], summary=verdict["summary"],
                duration_ms=int(verdict["seconds"] * 1000), file_path=verdict["file"],
                attempted_at=when)
        return
    record = {"drill": verdict["drill"], "verdict": verdict["status"], "summary": verdict["summary"],
              "file": verdict["file"], "attempted_at": when.isoformat()}
    paths.data_dir.mkdir(parents=True, exist_ok=True)
    with open(_interim_file(paths), "a", encoding="utf-8") as log:
        log.write(json.dumps(record) + "\n")
        log.flush()
        os.fsync(log.fileno())


def drill_status(paths) -> dict[str, str]:
    """{drill id: "passed" | "failing"} for attempted drills; missing ids are "not started"."""
    store_class = _store_class()
    if store_class is not None:
        if not paths.database_file.exists():
            return {}
        with store_class.open(paths) as store:
            return store.drill_status()
    status: dict[str, str] = {}
    try:
        lines = _interim_file(paths).read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        return status
    for line in lines:
        try:
            record = json.loads(line)
        except ValueError:
            continue  # a torn last line after a crash
        if status.get(record["drill"]) != "passed":
            status[record["drill"]] = "passed" if record["verdict"] == "pass" else "failing"
    return status
