"""How fast the TUI opens, reveals an answer and grades its first drill (issues 5, 15, 17).

    python benchmarks/tui_startup.py [--notes 10000] [--runs 5] [--think 5]

Measures, each in a fresh process, from just before the process is spawned:
  * bare      a bare Textual app showing one label, until its first frame is composed and
              handed to the terminal driver (`App._display`);
  * today     `studyapp` on a generated vault, until the Today screen's first frame is handed
              over the same way (the vault then loads in a worker; as in every Textual app the
              footer fills in its keys a frame later), until the Today figures (due, new,
              reviewed, streak) are drawn, until everything is drawn (heatmap, drills,
              mastery by topic), whether from the last start's snapshot (`today_snapshot`)
              or computed, and until it is refreshed (the vault loaded, every note's card
              and the statistics computed again and drawn);
  * reveal    on a vault holding one 400-line note full of code: the time to render its
              answer while the question is shown, and the time from the reveal key to the
              answer being on screen.
  * grade     `studyapp` on the same vault, warm: once it is loaded, the `sdpa` drill is opened and a
              passing file graded three times, at once and after `--think` seconds (the grader's
              worker starts in the background when the app opens, issue 17).
`--runs` more `today` runs start with an empty data dir each (cold: no metadata cache, no
snapshot, no pairings), interleaved with the warm ones.
Apps run headless (Textual's own test driver), so terminal output speed is not included.
Goals (issue 15, ratios to the bare app's first frame in the same run): first frame ≤ 1.5×,
Today's figures drawn warm ≤ 1.5×, everything on Today drawn warm ≤ 2×, everything drawn
cold ≤ 4×; reveal < 0.3 s. Issue 17: the first grade ≤ 1.5× a later grade's time.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
GOOD_SDPA = REPO / "kernels" / "sdpa" / "bank" / "right" / "masked_fill_inf.py"
NOW = "2026-11-22T09:00:00+08:00"

PROSE = ("注意力机制让每个位置根据相关性加权汇总其他位置的信息。"
         "缩放因子控制点积的方差, 避免 softmax 饱和。"
         "多头把表示拆到多个子空间, 各自学习不同的依赖关系。")
CODE = '''```python
def attention(q, k, v, mask=None):
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))
    if mask is not None:
        scores = scores.masked_fill(mask == 0, float("-inf"))
    return torch.softmax(scores, dim=-1) @ v
```
'''


def note_text(rng: random.Random, index: int, body_lines: int = 30) -> str:
    reviewed = rng.random() < 0.6
    count = rng.randint(1, 8) if reviewed else 0
    last = f"'2026-{rng.randint(9, 11):02d}-{rng.randint(1, 20):02d}'" if reviewed else "null"
    nxt = f"'2026-{rng.randint(11, 12):02d}-{rng.randint(1, 28):02d}'"
    parts = [
        "---", "created: '2026-09-01'", f"last_reviewed: {last}", f"next_review: {nxt}",
        f"review_count: {count}", f"difficulty: {rng.choice(['easy', 'medium', 'hard'])}",
        "mastery_level: 0.0", "tags:", f"- 主题{index % 40}", "related_outlines: []", "---",
        f"# 第 {index} 个问题: 注意力为什么要缩放?", "", "## 面试标准答案", PROSE, "", "## 详细技术解析",
    ]
    for _ in range(body_lines // 6):
        parts.append(PROSE)
        parts.append(CODE)
    return "\n".join(parts) + "\n"


def generate_vault(root: Path, count: int) -> None:
    rng = random.Random(5)
    for i in range(count):
        folder = root / f"主题{i % 40}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"笔记{i:05d}.md").write_text(note_text(rng, i), encoding="utf-8")


def code_heavy_note(lines: int = 400) -> str:
    """One note whose answer section is ~`lines` lines, mostly fenced Python."""
    parts = ["---", "created: '2026-11-01'", "last_reviewed: null", "next_review: '2026-11-01'",
             "review_count: 0", "difficulty: hard", "mastery_level: 0.0", "tags:", "- 代码",
             "related_outlines: []", "---", "# 手写一个完整的 Transformer 编码器", "", "## 面试标准答案"]
    block = 0
    while len(parts) < lines:
        block += 1
        parts += [f"### 第 {block} 部分", PROSE, "", "```python"]
        parts += [f"class Block{block}(nn.Module):", "    def forward(self, x, mask=None):"]
        parts += [f"        x = x + self.attn(self.norm{j}(x), mask)  # 残差 {j}" for j in range(12)]
        parts += ["        return x", "```", "| 维度 | 含义 |", "|---|---|", "| d_k | 每个头的维度 |", ""]
    return "\n".join(parts) + "\n"


# -- children (each runs in its own fresh interpreter) -------------------------------------

def mark_first_frame(marks: dict, pending: dict | None = None) -> None:
    """Record when the app first hands a composed frame to its terminal driver, and (`pending`:
    mark name -> True once its content is set on a widget) when the first frame after each
    mark's content was set is handed over: the moment that content reaches the terminal."""
    from textual.app import App

    display = App._display

    def _display(self, screen, renderable):
        if renderable is not None:
            now = time.time()
            if "paint" not in marks:
                marks["paint"] = now
                marks["painted_screen"] = type(screen).__name__
            for name in [name for name, waiting in (pending or {}).items() if waiting]:
                marks.setdefault(name, now)
                del pending[name]
        return display(self, screen, renderable)

    App._display = _display


def child_bare() -> dict:
    from textual.app import App
    from textual.widgets import Label

    marks: dict = {}
    mark_first_frame(marks)

    class Bare(App):
        def compose(self):
            yield Label("hello")

        def on_mount(self):
            self.call_after_refresh(self.exit)

    Bare().run(headless=True, size=(100, 30))
    return marks


def child_today(vault: str, data: str) -> dict:
    from studyapp.context import build_context
    from studyapp.tui.app import StudyApp
    from studyapp.tui.screens.today import TodayScreen

    marks: dict = {}
    pending: dict = {}
    mark_first_frame(marks, pending)
    original = TodayScreen.on_today_computed
    original_counted = TodayScreen._show_counts
    original_summary = getattr(TodayScreen, "_show_summary", None)  # None: a version without snapshots

    def show_counts(self, counts, *args, **kwargs):
        """The figures drawn, whether from the snapshot or the metadata cache (while the vault
        loads) or from the load."""
        original_counted(self, counts, *args, **kwargs)
        if "counts" not in marks:
            pending["counts"] = True

    def show_summary(self, summary, *args, **kwargs):
        """Everything drawn, whether from the last start's snapshot or computed after the load."""
        original_summary(self, summary, *args, **kwargs)
        if "drawn" not in marks:
            pending["drawn"] = True

    def on_today_computed(self, message):
        original(self, message)
        marks["data_handled"] = time.time()
        pending["data"] = True
        if original_summary is None and "drawn" not in marks:
            pending["drawn"] = True
        self.app.call_after_refresh(done, self.app)

    def done(app):
        marks.setdefault("data", time.time())  # the frame was handed over before, as a rule
        app.exit()

    TodayScreen.on_today_computed = on_today_computed
    TodayScreen._show_counts = show_counts
    if original_summary is not None:
        TodayScreen._show_summary = show_summary
    ctx = build_context(vault=vault, data_dir=data, now=NOW, seed=False)
    try:
        from studyapp.commands import parse_first_start_ahead
    except ImportError:  # a version without it (an A/B against an older checkout)
        pass
    else:
        parse_first_start_ahead(ctx)  # as `studyapp` does before it starts the app
    app = StudyApp(ctx)
    app.run(headless=True, size=(100, 30))
    return marks


def child_grade(vault: str, data: str, think: str) -> dict:
    """Open the app, open the `sdpa` drill once the vault is loaded, wait `think` seconds (the
    learner reading the statement), then grade three times; marks each verdict on screen."""
    from studyapp.context import build_context
    from studyapp.tui.app import StudyApp
    from studyapp.tui.screens.drill import DrillScreen

    marks: dict = {"submitted": [], "verdicts": [], "statuses": []}
    original_loaded = StudyApp.on_vault_loaded
    original_finished = DrillScreen.on_grade_finished

    def submit(screen) -> None:
        if not marks["submitted"]:  # the learner's solution, in the editor (a review try opens
            from textual.widgets import TextArea  # on the starter: `drill_reviews.begin`)

            screen.query_one("#code", TextArea).text = GOOD_SDPA.read_text(encoding="utf-8")
        marks["submitted"].append(time.time())
        screen.action_run()

    def on_vault_loaded(self, message):
        original_loaded(self, message)
        self.action_open_drill("sdpa")
        self.set_timer(float(think) or 0.001, lambda: submit(self.screen))

    def on_grade_finished(self, message):
        original_finished(self, message)

        def drawn() -> None:
            marks["verdicts"].append(time.time())
            marks["statuses"].append(message.verdict.get("status"))
            if len(marks["verdicts"]) < 3:
                submit(self)
            else:
                self.app.exit()

        self.app.call_after_refresh(drawn)

    StudyApp.on_vault_loaded = on_vault_loaded
    DrillScreen.on_grade_finished = on_grade_finished
    ctx = build_context(vault=vault, data_dir=data, now=NOW, seed=False)
    StudyApp(ctx).run(headless=True, size=(100, 30))
    return marks


def child_reveal(vault: str, data: str) -> dict:
    from studyapp.context import build_context
    from studyapp.tui.app import StudyApp

    async def main() -> dict:
        ctx = build_context(vault=vault, data_dir=data, now=NOW, seed=False)
        app = StudyApp(ctx)
        async with app.run_test(size=(100, 30)) as pilot:
            for _ in range(3):
                await pilot.pause()
                await app.workers.wait_for_complete()
            await pilot.press("r")
            for _ in range(3):
                await pilot.pause()
                await app.workers.wait_for_complete()
            screen = app.screen
            answer = screen.query_one("#answer")
            started = time.perf_counter()
            answer.show(screen.card.answer)  # what showing the card does while the question is asked
            await pilot.pause()
            render = time.perf_counter() - started
            started = time.perf_counter()
            screen.action_reveal()
            await pilot.pause()
            reveal = time.perf_counter() - started
            assert screen.revealed
            return {"render_hidden": render, "reveal": reveal, "answer_lines": screen.card.answer.count("\n")}

    return asyncio.run(main())


CHILD_ENV = {name: value for name, value in os.environ.items() if name != "PYTHONDONTWRITEBYTECODE"}
"""Children may cache bytecode, as an installed app does (pip compiles it): a shell that sets
PYTHONDONTWRITEBYTECODE would otherwise have every start compile the app's modules."""


def run_child(*args: str) -> tuple[float, dict]:
    spawned = time.time()
    out = subprocess.run([sys.executable, __file__, "--child", *args], capture_output=True, text=True,
                         cwd=REPO, timeout=300, env=CHILD_ENV)
    if out.returncode != 0:
        raise SystemExit(f"child {args} failed:\n{out.stderr[-3000:]}")
    return spawned, json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--notes", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--think", type=float, default=5.0,
                        help="seconds between opening the drill and the first grade, as a learner reads it")
    parser.add_argument("--startup-only", action="store_true",
                        help="time the start-up only (issue 15's goals), not the reveal nor the grades")
    parser.add_argument("--child", nargs="+", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        kind, *rest = args.child
        marks = {"bare": child_bare, "today": child_today, "reveal": child_reveal, "grade": child_grade}[kind](*rest)
        print(json.dumps(marks))
        return

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        vault, data = root / "vault", root / "data"
        print(f"generating {args.notes} notes…", file=sys.stderr)
        generate_vault(vault, args.notes)

        colds = []

        def run_cold(data_dir: Path) -> None:
            spawned, marks = run_child("today", str(vault), str(data_dir))  # empty data dir: cold
            assert marks["painted_screen"] == "TodayScreen", marks
            colds.append((marks["paint"] - spawned, marks["counts"] - spawned, marks["drawn"] - spawned))

        run_cold(data)  # and `data` is warm from now on
        bare, paint, counted, drawn, loaded = [], [], [], [], []
        for run in range(args.runs):  # interleaved, so a busy moment of the machine hits all
            if run:
                run_cold(root / f"data-cold-{run}")
            spawned, marks = run_child("bare")
            bare.append(marks["paint"] - spawned)
            spawned, marks = run_child("today", str(vault), str(data))
            assert marks["painted_screen"] == "TodayScreen", marks
            paint.append(marks["paint"] - spawned)
            counted.append(marks["counts"] - spawned)
            drawn.append(marks["drawn"] - spawned)
            loaded.append(marks["data"] - spawned)

        small = root / "small"
        (small / "代码").mkdir(parents=True)
        (small / "代码" / "编码器.md").write_text(code_heavy_note(), encoding="utf-8")
        reveals = [] if args.startup_only else [
            run_child("reveal", str(small), str(root / "small-data"))[1] for _ in range(args.runs)]

        grades: dict[float, list] = {} if args.startup_only else {think: [] for think in (0.0, args.think)}
        for think in grades:
            for _ in range(args.runs):
                workspace = data / "workspace"  # the warm data dir of the Today runs
                workspace.mkdir(parents=True, exist_ok=True)
                (workspace / "sdpa.py").write_bytes(GOOD_SDPA.read_bytes())
                spawned, marks = run_child("grade", str(vault), str(data), str(think))
                assert marks["statuses"] == ["pass"] * 3, marks
                first = marks["verdicts"][0] - marks["submitted"][0]
                later = statistics.median(v - s for s, v in zip(marks["submitted"][1:], marks["verdicts"][1:]))
                grades[think].append((marks["verdicts"][0] - spawned, first, later))

    med = statistics.median
    floor = med(bare)
    cold = [med(c[i] for c in colds) for i in range(3)]

    def ratio(seconds: float, goal: float | None = None) -> str:
        text = f"{seconds:6.3f}   = {seconds / floor:5.2f}x bare"
        if goal is not None:
            text += f"   (goal <= {goal}x: {'met' if seconds / floor <= goal else 'NOT met'})"
        return text

    load = " / ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"\nTUI start-up, {args.notes} notes, median of {args.runs} runs (seconds, from process spawn), "
          f"{os.cpu_count()} CPUs, load average {load} (1/5/15 min, at the end)")
    print(f"  bare Textual app, first frame           {floor:6.3f}   (the floor, measured in this run)")
    print(f"  studyapp Today, first frame (warm)      {ratio(med(paint), 1.5)}")
    print(f"  studyapp Today, figures drawn (warm)    {ratio(med(counted), 1.5)}")
    print(f"  studyapp Today, everything drawn (warm) {ratio(med(drawn), 2.0)}")
    print(f"  studyapp Today, refreshed (warm)        {ratio(med(loaded))}   (vault loaded, all computed again)")
    print(f"  studyapp Today, first frame (cold)      {ratio(cold[0])}")
    print(f"  studyapp Today, figures drawn (cold)    {ratio(cold[1])}   (empty caches)")
    print(f"  studyapp Today, everything drawn (cold) {ratio(cold[2], 4.0)}")
    if grades:
        print(f"\nGrading `sdpa` (a passing file) in the app, {args.notes} notes, median of {args.runs} runs")
    for think, runs in grades.items():
        launch = med(r[0] for r in runs)
        first = med(r[1] for r in runs)
        later = med(r[2] for r in runs)
        print(f"  run {'as soon as the drill opens' if not think else f'{think:g} s after the drill opens'}:")
        print(f"    launch -> first verdict on screen     {launch:6.3f}   = {launch / later:5.2f}x a later grade")
        print(f"    first grade, key -> verdict           {first:6.3f}   = {first / later:5.2f}x a later grade"
              f"   (goal <= 1.5x: {'met' if first / later <= 1.5 else 'NOT met'})")
        print(f"    later grade, key -> verdict           {later:6.3f}")
    if not reveals:
        return
    lines = reveals[0]["answer_lines"]
    print(f"\nReveal, one note with a {lines}-line code-heavy answer, median of {args.runs} runs")
    print(f"  render the answer while hidden          {med(r['render_hidden'] for r in reveals):6.3f}")
    print(f"  reveal key -> answer on screen          {med(r['reveal'] for r in reveals):6.3f}")


if __name__ == "__main__":
    main()
