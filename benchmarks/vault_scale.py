"""Time `studyapp due --json` on a generated 10,000-note vault: cold cache, warm cache, and
the floor of merely reading every file. Run: python benchmarks/vault_scale.py [--notes N]

Goals (issue 2, on a 2-core machine): cold <= 2.0 s, warm <= 0.5 s, end to end.
Cold = a fresh data dir (empty cache); warm = later runs on the same data dir. The package is
byte-compiled first, as an installed wheel is (otherwise, with PYTHONDONTWRITEBYTECODE set,
every run would recompile studyapp's modules). Other load on the machine inflates wall times:
the load average is printed with the figures.
"""

from __future__ import annotations

import argparse
import os
import random
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
TOPICS = ["注意力机制", "归一化", "位置编码", "优化器", "分布式训练", "量化", "推理加速", "损失函数"]
PROSE = ("在实际训练中，我们需要关注数值稳定性与显存占用。缩放因子可以避免 softmax 饱和，"
         "而掩码决定了哪些位置可以被看到。面试时先给出结论，再解释原因与代价。")
CODE = '''```python
import torch

def scaled_dot_product(q, k, v, mask=None):
    scores = q @ k.transpose(-2, -1) / q.shape[-1] ** 0.5
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    return torch.softmax(scores, dim=-1) @ v
```
'''


def make_note(rng: random.Random, topic: str, name: str) -> str:
    day = f"2026-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}"
    count = rng.randint(0, 8)
    last = "null" if count == 0 else f"'{day}'"
    paragraphs = "\n\n".join(PROSE * rng.randint(1, 3) for _ in range(rng.randint(3, 8)))
    return (
        f"---\ncreated: '2026-01-01'\nlast_reviewed: {last}\nnext_review: '{day}'\n"
        f"review_count: {count}\ndifficulty: {rng.choice(['easy', 'medium', 'hard'])}\n"
        f"mastery_level: {round(rng.random(), 3)}\ntags:\n- {topic}\n- {topic}/{name}.md\n"
        f"related_outlines: []\n---\n# {name}\n\n## 面试标准答案\n\n{PROSE}\n\n## 详细技术解析\n\n"
        f"{paragraphs}\n\n{CODE}\n## 相关笔记\n<!-- 自动生成 -->\n"
    )


def generate(vault: Path, count: int) -> int:
    rng = random.Random(42)
    total = 0
    for i in range(count):
        topic = TOPICS[i % len(TOPICS)]
        name = f"{topic}知识点{i:05d}"
        path = vault / topic / f"{name}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        data = make_note(rng, topic, name).encode()
        path.write_bytes(data)
        total += len(data)
    old = time.time() - 3600  # older than the cache's racy-mtime window, like a real vault
    for path in vault.rglob("*.md"):
        os.utime(path, (old, old))
    return total


CPU: dict[str, list[float]] = {"cold": [], "warm": []}
"""CPU seconds (user + system) of each timed run: steadier than wall time on a busy machine."""


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def time_due(vault: Path, data: Path, kind: str | None = None) -> float:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    cpu = _children_cpu()
    start = time.perf_counter()
    out = subprocess.run(
        [sys.executable, "-m", "studyapp", "due", "--json", "--vault", str(vault), "--data-dir", str(data),
         "--now", "2026-06-15"], env=env, capture_output=True,
    )
    elapsed = time.perf_counter() - start
    if kind:
        CPU[kind].append(_children_cpu() - cpu)
    if out.returncode != 0:
        raise SystemExit(out.stderr.decode())
    return elapsed


def time_read_all(vault: Path) -> float:
    start = time.perf_counter()
    for folder, _dirs, files in os.walk(vault):
        for name in files:
            with open(os.path.join(folder, name), "rb") as f:
                f.read()
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--notes", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(REPO / "studyapp")], check=True,
                   capture_output=True)
    root = Path(tempfile.mkdtemp(prefix="studyapp-bench-"))
    try:
        vault = root / "vault"
        size = generate(vault, args.notes)
        cold, warm = [], []
        for run in range(args.runs):
            data = root / f"data-cold-{run}"
            cold.append(time_due(vault, data, "cold"))  # fresh data dir: empty cache
        data = root / "data-warm"
        time_due(vault, data)
        warm = [time_due(vault, data, "warm") for _ in range(args.runs)]
        read = [time_read_all(vault) for _ in range(args.runs)]
        load = " / ".join(f"{x:.2f}" for x in os.getloadavg())
        print(f"{args.notes} notes, {size / 1e6:.1f} MB, {os.cpu_count()} CPUs, Python {sys.version.split()[0]}, "
              f"load average {load} (1/5/15 min, at the end)")
        print(f"{'measure':<36}{'median':>9}{'min':>9}{'max':>9}")
        for label, values, goal in [
            ("studyapp due --json, cold cache", cold, "goal <= 2.0 s"),
            ("studyapp due --json, warm cache", warm, "goal <= 0.5 s"),
            ("  CPU time (user+sys), cold", CPU["cold"], ""),
            ("  CPU time (user+sys), warm", CPU["warm"], ""),
            ("read every file (Python, in-process)", read, ""),
        ]:
            print(f"{label:<36}{statistics.median(values):>8.3f}s{min(values):>8.3f}s{max(values):>8.3f}s  {goal}")
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
