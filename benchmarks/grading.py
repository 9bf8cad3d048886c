"""How fast is grading, as a user feels it?

1. Wall time of `studyapp grade sdpa good.py` against `python -c "import torch"` (goal: <= 1.5x):
   the worker imports torch once, so a single grade should cost little more than that import.
2. Marginal time per submission when grading 20 files in one call (goal: <= 0.25 s each):
   (time for 20 files - time for 1 file) / 19.
3. Per drill, for every drill folder under kernels/ (new ones are picked up on their own): the
   worker's time to grade the drill's reference solution, cold (the first grade in a fresh
   worker: public cases, oracle and sandboxed child built for the first time) and warm (the
   median of later grades with other seeds). Goal: under 2 s warm. Torch's import, paid once
   per worker before its first job, is in neither figure (section 1 measures it).

Run from the repository root:  python benchmarks/grading.py [--repeat 5] [--device cpu] [--drills-only]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BANK = ROOT / "kernels" / "sdpa" / "bank"
GOOD = BANK / "right" / "masked_fill_inf.py"
WARM_GOAL = 2.0
"""Seconds a drill's reference may take to grade in a warm worker."""


def wall_time(cmd: list[str], env: dict[str, str], expect: tuple[int, ...] = (0,)) -> float:
    started = time.perf_counter()
    done = subprocess.run(cmd, env=env, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    elapsed = time.perf_counter() - started
    if done.returncode not in expect:
        sys.exit(f"{' '.join(cmd)} exited {done.returncode}: {done.stderr.decode()[-2000:]}")
    return elapsed


def twenty_files(folder: Path) -> list[str]:
    """20 submissions: every sdpa bank file, right and wrong, cycled, each under its own name."""
    sources = sorted(BANK.glob("*/*.py"))
    paths = []
    for i in range(20):
        target = folder / f"submission_{i:02d}.py"
        shutil.copyfile(sources[i % len(sources)], target)
        paths.append(str(target))
    return paths


def drill_times(device: str, repeat: int) -> list[tuple[str, float, float]]:
    """(drill id, cold seconds, warm seconds) of each drill's reference, in catalog order.

    Times are the worker's own (`verdict["seconds"]`): one job, from reading the file to the
    verdict, sandboxed child included. Each drill gets a fresh worker, so its cold grade pays
    for nothing another drill built.
    """
    sys.path.insert(0, str(ROOT))
    from studyapp.config import Settings
    from studyapp.grader.client import GraderClient
    from studyapp.grader.contract import GradeLimits
    from studyapp.kernels_loader import load_kernels

    load_kernels()
    from studyapp_kernels.catalog import CATALOG  # torch-free

    rows = []
    for drill_id, info in CATALOG.items():
        # a generous timeout: a slow first grade is measured, not cut off
        with GraderClient(GradeLimits(timeout=60.0, memory_mb=Settings().grader_memory_mb)) as client:
            times = []
            for seed in range(1 + repeat):
                verdict = client.grade(drill_id, info.reference_path, device=device, seed=seed)
                if verdict["status"] != "pass":
                    sys.exit(f"{drill_id}: its reference did not pass: {verdict['summary']}")
                times.append(float(verdict["seconds"]))
        rows.append((drill_id, times[0], statistics.median(times[1:])))
    return rows


def print_drill_times(rows: list[tuple[str, float, float]]) -> None:
    width = max(len(drill_id) for drill_id, _, _ in rows)
    print(f"\n{'drill':<{width}}  cold s  warm s  (goal: warm < {WARM_GOAL:g} s)")
    for drill_id, cold, warm in rows:
        verdict = "ok" if warm < WARM_GOAL else "OVER"
        print(f"{drill_id:<{width}}  {cold:6.3f}  {warm:6.3f}  {verdict}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=5, help="runs per measurement; the median is reported")
    parser.add_argument("--device", default="cpu", choices=["cpu", "cuda", "auto"])
    parser.add_argument("--drills-only", action="store_true", help="only the per-drill times (section 3)")
    args = parser.parse_args()

    if args.drills_only:
        print_drill_times(drill_times(args.device, args.repeat))
        print_machine(args.device)
        return
    data_dir = Path(tempfile.mkdtemp(prefix="studyapp-bench-"))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH")) if p),
               STUDYAPP_DATA_DIR=str(data_dir))
    studyapp = [sys.executable, "-m", "studyapp", "grade", "sdpa", "--device", args.device]
    files = twenty_files(data_dir)
    try:
        wall_time(studyapp + [str(GOOD)], env)  # warm the OS file cache once, unmeasured
        runs = {"import torch": [], "grade 1 file": [], "grade 20 files": []}
        for _ in range(args.repeat):  # interleaved, so drifting machine load hits all alike
            runs["import torch"].append(wall_time([sys.executable, "-c", "import torch"], env))
            runs["grade 1 file"].append(wall_time(studyapp + [str(GOOD)], env))
            runs["grade 20 files"].append(wall_time(studyapp + files, env, expect=(0, 1)))
    finally:
        shutil.rmtree(data_dir, ignore_errors=True)

    median = {name: statistics.median(times) for name, times in runs.items()}
    for name, times in runs.items():
        print(f"{name:<15} median {median[name]:6.3f} s   (runs: {', '.join(f'{t:.3f}' for t in times)})")
    ratio = median["grade 1 file"] / median["import torch"]
    marginal = (median["grade 20 files"] - median["grade 1 file"]) / 19
    print(f"\ngrade 1 file / import torch: {ratio:.2f}x   (goal <= 1.5x)")
    print(f"marginal time per submission: {marginal:.3f} s   (goal <= 0.25 s)")
    print_drill_times(drill_times(args.device, args.repeat))
    print_machine(args.device)


def print_machine(device: str) -> None:
    print(f"device {device}, python {sys.version.split()[0]}, {os.cpu_count()} CPUs, "
          f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    sys.path.insert(0, str(ROOT))
    from studyapp.grader.confine import probe

    print(f"sandbox: {probe().describe()}")


if __name__ == "__main__":
    main()
