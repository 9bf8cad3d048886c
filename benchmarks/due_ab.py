"""A/B of a warm (or, with --cold, cold) `studyapp due --json`: this tree against another
checkout (a commit to compare with), runs interleaved so that both see the same machine. Run:

    git worktree add --detach /tmp/base <commit>
    python benchmarks/due_ab.py /tmp/base [--vault DIR] [--runs N] [--cold]

Cold: every run starts with an empty data dir (no metadata cache), as a first start does.

On a shared machine wall times drift by 10 % between runs minutes apart; interleaving A and B
and comparing CPU seconds (user + sys of the whole process) is what tells a change of a few
per cent from the machine's mood. Both outputs are compared too: a faster `due` must print the
same queue. Without --vault a 10,000-note vault is generated as `vault_scale.py` makes it.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "benchmarks"))
from vault_scale import generate  # noqa: E402


def timed_due(tree: Path, vault: Path, data: Path) -> tuple[float, float, bytes]:
    """(CPU seconds, wall seconds, stdout) of one `due --json` run with `tree` on the path."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    out = subprocess.run(
        [sys.executable, "-m", "studyapp", "due", "--json", "--vault", str(vault), "--data-dir", str(data),
         "--now", "2026-06-15"],
        env={**os.environ, "PYTHONPATH": str(tree)}, cwd=tempfile.gettempdir(), capture_output=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if out.returncode != 0:
        raise SystemExit(out.stderr.decode())
    return after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime, wall, out.stdout


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("base", type=Path, help="the other checkout's root")
    parser.add_argument("--vault", type=Path, help="a vault to load (default: a generated one)")
    parser.add_argument("--notes", type=int, default=10_000)
    parser.add_argument("--note-size", type=int, default=0, metavar="BYTES")
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--cold", action="store_true", help="time cold runs: a fresh data dir each")
    args = parser.parse_args()
    trees = {"base": args.base.resolve(), "this": REPO}
    with tempfile.TemporaryDirectory() as scratch:
        vault = args.vault or Path(scratch) / "vault"
        if args.vault is None:
            generate(vault, args.notes, args.note_size)
        for tree in trees.values():  # byte-compiled, as an installed copy is
            subprocess.run([sys.executable, "-m", "compileall", "-q", str(tree / "studyapp"), str(tree / "kernels")],
                           capture_output=True)
        datas = {name: Path(scratch) / f"data-{name}" for name in trees}
        outputs = {}
        for name, tree in trees.items():
            timed_due(tree, vault, datas[name])  # cold: fills the caches
            timed_due(tree, vault, datas[name])
        samples: dict[str, list[tuple[float, float]]] = {name: [] for name in trees}
        for _ in range(args.runs):
            for name, tree in trees.items():
                if args.cold:
                    shutil.rmtree(datas[name])
                cpu, wall, outputs[name] = timed_due(tree, vault, datas[name])
                samples[name].append((cpu, wall))
    load = os.getloadavg()
    print(f"{'cold' if args.cold else 'warm'} due --json, {args.runs} interleaved runs each, load average {load[0]:.2f} / {load[1]:.2f} / {load[2]:.2f}")
    for name in trees:
        cpus, walls = [c for c, _ in samples[name]], [w for _, w in samples[name]]
        print(f"  {name:5} CPU median {statistics.median(cpus) * 1000:6.1f} ms (min {min(cpus) * 1000:6.1f})"
              f"   wall median {statistics.median(walls) * 1000:6.1f} ms")
    ratio = statistics.median(c for c, _ in samples["this"]) / statistics.median(c for c, _ in samples["base"])
    walls = statistics.median(w for _, w in samples["this"]) / statistics.median(w for _, w in samples["base"])
    print(f"  this / base, CPU: {ratio:.3f}, wall: {walls:.3f}")
    print(f"  same output: {outputs['base'] == outputs['this']}")


if __name__ == "__main__":
    main()
