"""The rename check every load runs (`identity.has_vanished`), on a vault whose notes all have
a stored row (every note reviewed once), against the floor measured in the same run: the
narrower check it replaced, one query of whole rows and a lookup of each path.

Run: python benchmarks/rename_check.py [--notes 10000] [--repeat 15]

Prints the medians and their ratio, with the load average. Uses the vault generator of
`vault_scale.py` (small notes) in a temporary folder.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))

from vault_scale import generate  # noqa: E402

from studyapp.identity import has_vanished  # noqa: E402
from studyapp.paths import resolve_paths  # noqa: E402
from studyapp.store import Store  # noqa: E402
from studyapp.vault import Vault  # noqa: E402


def narrower_check(store: Store, notes, problem_paths) -> bool:
    """The check before this session: a stored path missing from the vault, nothing else."""
    present = {n.path for n in notes} | set(problem_paths)
    return any(row.path not in present for row in store.live_notes())


def timed(check, store, notes, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        check(store, notes, [])
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--notes", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=15)
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="studyapp-rename-check-"))
    try:
        generate(root / "vault", args.notes, 0)
        paths = resolve_paths(str(root / "vault"), str(root / "data"))
        store = Store.open(paths)
        notes = Vault(root / "vault", root / "cache.sqlite3").load().notes
        store.add_notes([(n.path, n.title) for n in notes], datetime.now(timezone.utc))
        floor = [timed(narrower_check, store, notes, args.repeat)]
        ours = [timed(has_vanished, store, notes, args.repeat)]
        floor.append(timed(narrower_check, store, notes, args.repeat))  # interleaved
        ours.append(timed(has_vanished, store, notes, args.repeat))
        load = " / ".join(f"{x:.2f}" for x in os.getloadavg())
        print(f"{args.notes} notes with a stored row each; load average {load} (1/5/15 min)")
        print(f"floor: the narrower check it replaced   {min(floor) * 1000:7.1f} ms (median of {args.repeat}, best of 2)")
        print(f"identity.has_vanished                   {min(ours) * 1000:7.1f} ms")
        print(f"ratio                                   {min(ours) / min(floor):7.2f}x")
        store.close()
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
