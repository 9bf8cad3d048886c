"""How well does the scheduler predict recall, and how fast is recording a review?

Part 1 replays the real Anki review log at `../shared/data/revlog-real-12580.csv` (relative to
the project root; the script says so and exits cleanly when it is absent) in time order. The
protocol is the same for all three models:

- split by time: the first 70% of reviews (by timestamp) is the training part, the rest the
  test part; a card can have reviews in both (as a real user's cards do);
- each model replays every card's full history, training part included, with its own
  parameters, and predicts recall just before each review;
- scored: the test-part reviews made a whole day (24 h) or more after the card's previous
  review, the reviews the app's fsrs Scheduler predicts (it gives recall 1.0 under a day) and
  the ones fitting learns from; the same reviews for every model. Recalled = any
  rating but Again. Log loss, RMSE over reviews, and RMSE over 20 bins of predicted recall.

  (a) FSRS with default parameters;
  (b) FSRS with parameters fitted by `studyapp optimize`'s code path
      (`studyapp.optimize.fit_parameters`, the fsrs-rs optimizer) on the training part only,
      with the fit's wall time;
  (c) the previous tool's fixed medium ladder [1,2,5,10,21,45,90] days as a prediction,
      recall = 0.9 ** (elapsed / scheduled interval). The ladder is indexed by the number of
      earlier review days (one review a day is all that tool knows), capped at its last step.

Part 2 records 1,000 reviews in one process through `ReviewService.record_review` (the path
the TUI takes: note read, FSRS, byte-exact file write with fsync, database commit) on a
generated vault, and reports the time per review.

    PYTHONPATH=$PWD python benchmarks/scheduler_quality.py [--skip-fit] [--train-share 0.7]
        [--reviews 1000]
"""

from __future__ import annotations

import argparse
import csv
import math
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from datetime import datetime, timedelta, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

REVLOG = ROOT.parent / "shared" / "data" / "revlog-real-12580.csv"
MEDIUM_LADDER = (1, 2, 5, 10, 21, 45, 90)
TRAIN_SHARE = 0.7


def read_log(path: Path):
    from fsrs import Rating, ReviewLog

    with path.open(newline="") as fh:
        rows = list(csv.DictReader(fh))
    logs = [ReviewLog(int(r["card_id"]), Rating(int(r["review_rating"])),
                      datetime.fromisoformat(r["review_time"]).astimezone(timezone.utc),
                      int(r["review_duration"])) for r in rows]
    logs.sort(key=lambda r: r.review_datetime)
    return logs


def replay_fsrs(logs, parameters, scored_from):
    """(prediction, outcome) for each scored review, replaying every card through FSRS."""
    from fsrs import Card, Rating, Scheduler

    scheduler = Scheduler(parameters=parameters, enable_fuzzing=False)
    cards: dict[int, Card] = {}
    pairs = []
    for log in logs:
        card = cards.get(log.card_id) or Card(card_id=log.card_id, due=log.review_datetime)
        if (card.last_review and (log.review_datetime - card.last_review).days > 0
                and log.review_datetime >= scored_from):
            p = scheduler.get_card_retrievability(card, log.review_datetime)
            pairs.append((p, int(log.rating != Rating.Again)))
        cards[log.card_id], _ = scheduler.review_card(card, log.rating, log.review_datetime)
    return pairs


def replay_ladder(logs, scored_from):
    """(prediction, outcome) for the same reviews under the previous tool's medium ladder."""
    from fsrs import Rating

    last: dict[int, datetime] = {}
    review_days: dict[int, set] = defaultdict(set)
    pairs = []
    for log in logs:
        previous = last.get(log.card_id)
        if (previous and (log.review_datetime - previous).days > 0
                and log.review_datetime >= scored_from):
            n = len(review_days[log.card_id])
            interval = MEDIUM_LADDER[min(n - 1, len(MEDIUM_LADDER) - 1)]
            elapsed = (log.review_datetime - previous).total_seconds() / 86400
            pairs.append((0.9 ** (elapsed / interval), int(log.rating != Rating.Again)))
        last[log.card_id] = log.review_datetime
        review_days[log.card_id].add(log.review_datetime.date())
    return pairs


def scores(pairs):
    """Log loss, RMSE over reviews, and binned RMSE (20 bins of predicted recall)."""
    eps = 1e-6
    loss = -statistics.fmean(y * math.log(min(max(p, eps), 1 - eps))
                             + (1 - y) * math.log(1 - min(max(p, eps), 1 - eps)) for p, y in pairs)
    rmse = math.sqrt(statistics.fmean((p - y) ** 2 for p, y in pairs))
    bins: dict[int, list] = defaultdict(list)
    for p, y in pairs:
        bins[min(int(p * 20), 19)].append((p, y))
    binned = math.sqrt(sum(
        len(b) * (statistics.fmean(p for p, _ in b) - statistics.fmean(y for _, y in b)) ** 2
        for b in bins.values()) / len(pairs))
    return loss, rmse, binned


def quality(skip_fit: bool, train_share: float = TRAIN_SHARE) -> None:
    if not REVLOG.exists():
        print(f"review log not found at {REVLOG} (../shared/data/ relative to the project "
              "root); skipping the quality part")
        return
    from fsrs.scheduler import DEFAULT_PARAMETERS

    from studyapp.optimize import fit_parameters

    logs = read_log(REVLOG)
    split = logs[int(len(logs) * train_share)].review_datetime
    train = [r for r in logs if r.review_datetime < split]
    print(f"{len(logs)} reviews of {len({r.card_id for r in logs})} cards; "
          f"train {len(train)} before {split:%Y-%m-%d}, evaluate on the rest")
    rows = [("(a) FSRS default parameters", replay_fsrs(logs, DEFAULT_PARAMETERS, split))]
    if not skip_fit:
        started = time.perf_counter()
        fit = fit_parameters(train)
        took = time.perf_counter() - started
        print(f"fitted on {fit.review_count} training reviews with fsrs-rs in {took:.2f} s wall "
              f"(torch loaded in this process: {'torch' in sys.modules}) "
              f"(train log loss {fit.log_loss_before:.4f} -> {fit.log_loss_after:.4f})")
        rows.append((f"(b) FSRS fitted on first {train_share:.0%}",
                     replay_fsrs(logs, fit.parameters, split)))
    rows.append(("(c) previous tool, medium ladder", replay_ladder(logs, split)))
    print()
    print(f"{'model':<36} {'reviews':>7} {'log loss':>9} {'RMSE':>7} {'RMSE(bins)':>10}")
    for name, pairs in rows:
        loss, rmse, binned = scores(pairs)
        print(f"{name:<36} {len(pairs):>7} {loss:>9.4f} {rmse:>7.4f} {binned:>10.4f}")
    print()


NOTE_TEMPLATE = """---
created: '2026-01-{day:02d}'
last_reviewed: null
next_review: '2026-01-{day:02d}'
review_count: 0
difficulty: medium
mastery_level: 0.0
tags:
- bench/topic{topic}
related_outlines: []
---
# 基准笔记 {i}: 注意力机制的第 {i} 个问题

## 面试标准答案
这是一段用于计时的答案文本，第 {i} 条。{filler}

## 详细技术解析
```python
def attention_{i}(q, k, v):
    return (q @ k.transpose(-2, -1)).softmax(-1) @ v
```
"""


def recording(count: int, notes: int = 200) -> None:
    from studyapp.context import build_context
    from studyapp.reviews import ReviewService

    with tempfile.TemporaryDirectory() as tmp:
        vault = Path(tmp) / "vault"
        vault.mkdir()
        filler = "文字" * 600
        for i in range(notes):
            folder = vault / f"topic{i % 10}"
            folder.mkdir(exist_ok=True)
            (folder / f"note{i:04d}.md").write_text(
                NOTE_TEMPLATE.format(day=1 + i % 28, topic=i % 10, i=i, filler=filler),
                encoding="utf-8")
        ctx = build_context(vault=str(vault), data_dir=str(Path(tmp) / "data"),
                            now=datetime(2026, 2, 1, 9, 0, tzinfo=timezone.utc))
        service = ReviewService(ctx)
        paths = [n.path for n in service.load().notes]
        ratings = ("good", "good", "again", "hard", "good", "easy")
        timings = []
        for i in range(count):
            ctx.frozen_now = ctx.frozen_now + timedelta(minutes=7)
            started = time.perf_counter()
            service.record_review(paths[i % len(paths)], ratings[i % len(ratings)], 5.0)
            timings.append(time.perf_counter() - started)
        service.close()
    timings_ms = sorted(t * 1000 for t in timings)
    print(f"recording {count} reviews over {notes} notes (~{len(filler.encode()) // 1024 + 1} KB "
          "each), one process, file write (fsync) + database commit per review:")
    print(f"  mean {statistics.fmean(timings_ms):.2f} ms, median {statistics.median(timings_ms):.2f}"
          f" ms, p95 {timings_ms[int(len(timings_ms) * 0.95)]:.2f} ms, "
          f"max {timings_ms[-1]:.2f} ms; total {sum(timings_ms) / 1000:.2f} s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--skip-fit", action="store_true", help="skip (b), the slow part")
    parser.add_argument("--skip-quality", action="store_true")
    parser.add_argument("--train-share", type=float, default=TRAIN_SHARE,
                        help="share of the log (by time) to fit on; the protocol is otherwise "
                             "unchanged (default %(default)s)")
    parser.add_argument("--reviews", type=int, default=1000, help="reviews to time (0: skip)")
    args = parser.parse_args()
    if not args.skip_quality:
        quality(args.skip_fit, args.train_share)
    if args.reviews:
        recording(args.reviews)


if __name__ == "__main__":
    main()
