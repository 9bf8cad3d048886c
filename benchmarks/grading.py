"""How fast is grading, as a user feels it?

1. Wall time of `studyapp grade sdpa good.py` against `python -c "import torch"` (goal: <= 1.5x):
   the worker imports torch once, so a single grade should cost little more than that import.
2. Marginal time per submission when grading 20 files in one call (goal: <= 0.25 s each):
   (time for 20 files - time for 1 file) / 19.

Run from the repository root:  python benchmarks/grading.py [--repeat 5] [--device cpu]
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
BANK = ROOT / "tests" / "drill_bank" / "sdpa"
GOOD = BANK / "right" / "masked_fill_inf.py"


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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=5, help="runs per measurement; the median is reported")
    parser.add_argument("--device", default="cpu", choices=["cpu", "cuda", "auto"])
    args = parser.parse_args()

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
    print(f"device {args.device}, python {sys.version.split()[0]}, {os.cpu_count()} CPUs, "
          f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    sys.path.insert(0, str(ROOT))
    from studyapp.grader.confine import probe

    print(f"sandbox: {probe().describe()}")


if __name__ == "__main__":
    main()
