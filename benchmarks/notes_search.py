"""Time the Notes screen's full-text filter (`StudyFacade.search_notes`) on a generated
10,000-note vault: the first search reads every body from disk, later ones use the cached,
casefolded text. It runs in a worker, so the table's title/path matches never wait for it.

    .venv/bin/python benchmarks/notes_search.py [--notes 10000]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from vault_scale import generate  # noqa: E402

from studyapp.context import build_context  # noqa: E402
from studyapp.facade import StudyFacade  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--notes", type=int, default=10_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        vault, data = Path(tmp) / "vault", Path(tmp) / "data"
        generate(vault, args.notes)
        ctx = build_context(vault=str(vault), data_dir=str(data), seed=False)
        facade = StudyFacade(ctx)
        facade.load()
        facade.close()
        facade = StudyFacade(ctx)  # a warm start, as the app's: bodies are not read at load
        facade.load()
        for label, needle in (("first search (reads bodies)", "softmax"), ("second search", "mask"),
                              ("third search", "没有这个词")):
            start = time.perf_counter()
            hits = facade.search_notes(needle)
            print(f"{label:<28} {time.perf_counter() - start:6.3f} s  {len(hits)} hits")
        facade.close()
    print(f"load average: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
