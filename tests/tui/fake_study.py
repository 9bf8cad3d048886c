"""An in-memory stand-in for `studyapp.facade.StudyFacade`, handed to the app at construction
for screen tests that do not need the real vault and scheduler (those flows are tested
against the real facade elsewhere)."""

from __future__ import annotations

from datetime import date, timedelta
from pathlib import Path

from studyapp.views import (
    RATING_LABELS,
    Card,
    DrillDetail,
    DrillView,
    NoteView,
    Problem,
    RatingOption,
    ReviewOutcome,
    ReviewProgress,
    SessionSummary,
    StatsData,
    TodayCounts,
    TodaySummary,
    UndoKind,
    Undone,
)

TODAY = date(2026, 11, 22)

CARDS = [
    Card("注意力/点积注意力.md", "点积注意力为什么要除以 √d_k?", "防止点积方差随维度增大, softmax 饱和。",
         "# 点积注意力\n\n## 答案\n防止 softmax 饱和。\n\n## 细节\n```python\nscores = q @ k.T / d ** 0.5\n```\n",
         drills=("sdpa",)),
    Card("掩码/因果掩码.md", "What does a causal mask hide?", "Every position after the query's own.",
         "# Causal mask\n\n## Answer\nFuture positions.\n", is_new=True),
]


class FakeStudy:
    """Deterministic data; records calls so tests can assert on what the screens asked for."""

    def __init__(self, workspace: Path, cards: list[Card] | None = None, verdict: dict | None = None) -> None:
        self.workspace = workspace
        self.cards = list(CARDS if cards is None else cards)
        self.queue: list[Card] = []
        self.history: list[tuple[Card, int]] = []
        self.suspended: set[str] = set()
        self.calls: list[tuple] = []
        self.verdict = verdict or {"status": "fail", "summary": "values differ", "hint": "scale by 1/sqrt(d_k)",
                                   "checks": [{"name": "shape", "status": "pass", "message": ""},
                                              {"name": "values float32", "status": "fail", "message": "max error 0.41"}],
                                   "seconds": 0.5}

    def load(self):
        return len(self.cards), 1

    def today_counts(self) -> TodayCounts:
        s = self.today()
        return TodayCounts(s.new, s.learning, s.review, s.reviewed_today, s.streak, s.problems)

    def today(self) -> TodaySummary:
        heatmap = {TODAY - timedelta(days=i): (i * 7) % 5 for i in range(120)}
        return TodaySummary(new=1, learning=0, review=1, reviewed_today=3, streak=4, heatmap=heatmap,
                            drills=tuple(self.drills()[:2]),
                            mastery_by_tag=(("Transformer", 0.62), ("注意力机制", 0.35), ("掩码", 0.1)), problems=1)

    def begin_review(self) -> None:
        self.queue = [c for c in self.cards if c.path not in self.suspended]
        self.history = []

    def current_card(self) -> Card | None:
        return self.queue[0] if self.queue else None

    def left_out(self) -> list[str]:
        return []

    def progress(self) -> ReviewProgress:
        new = sum(c.is_new for c in self.queue)
        return ReviewProgress(new=new, learning=0, review=len(self.queue) - new, reviewed=len(self.history))

    def summary(self) -> SessionSummary:
        by_rating: dict[int, int] = {}
        for _, rating in self.history:
            by_rating[rating] = by_rating.get(rating, 0) + 1
        return SessionSummary(reviewed=len(self.history), by_rating=by_rating, seconds=75)

    def rating_options(self, path: str) -> list[RatingOption]:
        return [RatingOption(r, RATING_LABELS[r], i) for r, i in zip(RATING_LABELS, ("1m", "10m", "3d", "8d"))]

    def rate(self, path: str, rating: int, duration: float, revision: str | None = None) -> ReviewOutcome:
        self.calls.append(("rate", path, rating))
        card = self.queue.pop(0)
        self.history.append((card, rating))
        if rating == 1:
            self.queue.append(card)
        return ReviewOutcome(path, rating, "3d", TODAY + timedelta(days=3))

    def undo(self) -> Undone | None:
        if not self.history:
            return None
        card, rating = self.history.pop()
        if rating == 1:
            self.queue.pop()
        self.queue.insert(0, card)
        self.calls.append(("undo", card.path))
        return Undone(UndoKind.RATING, card.path, card.title, card)

    def suspend(self, path: str) -> None:
        self.calls.append(("suspend", path))
        self.suspended.add(path)
        self.queue = [c for c in self.queue if c.path != path]

    def unsuspend(self, path: str) -> None:
        self.suspended.discard(path)

    def suspended_now(self, path: str) -> bool:
        return path in self.suspended

    def toggle_suspended(self, path: str) -> bool:
        if path in self.suspended:
            self.unsuspend(path)
            return False
        self.suspend(path)
        return True

    def end_review(self) -> None:
        self.queue = []

    def note_file(self, path: str) -> Path:
        return self.workspace / path

    def reload_card(self, path: str) -> Card:
        return next(c for c in self.cards if c.path == path)

    note_card = reload_card

    def notes(self):
        rows = [NoteView(c.path, c.title, c.path.rpartition("/")[0], ("Transformer",), None if c.is_new else TODAY,
                        None if c.is_new else 0.5, 0 if c.is_new else 3, c.path in self.suspended) for c in self.cards]
        return rows, [Problem("坏/broken.md", "the metadata block is not valid YAML (line 3)")]

    def search_notes(self, text: str, should_stop=lambda: False) -> frozenset[str]:
        needle = text.casefold()
        return frozenset(c.path for c in self.cards if needle in f"{c.title}\n{c.body}".casefold())

    def drills(self) -> list[DrillView]:
        return [DrillView("sdpa", "Scaled dot-product attention", ("attention",), "failing", "values differ"),
                DrillView("causal_mask", "Causal mask", ("masks",), "not started")]

    def practise_drill(self, path: str) -> str:
        card = next(c for c in self.cards if c.path == path)
        return card.drills[0]

    def open_drill(self, drill_id: str) -> DrillDetail:
        path = self.workspace / f"{drill_id}.py"
        if not path.exists():
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text("def scaled_dot_product_attention(q, k, v):\n    raise NotImplementedError\n")
        return DrillDetail(drill_id, "Scaled dot-product attention", "Compute **softmax(QKᵀ/√d)V**.", path)

    def save_drill_file(self, path: Path, text: str) -> None:
        path.write_text(text, encoding="utf-8")

    def grade(self, drill_id: str, path: Path) -> dict:
        self.calls.append(("grade", drill_id, path.read_text()))
        return dict(self.verdict)

    def cancel_grade(self) -> None:
        self.calls.append(("cancel",))

    # drills as review items: nothing due, no try, so the screens look as before
    def next_due_drill(self):
        return None

    def keep_workspace_copy(self, path: Path) -> Path | None:
        from studyapp.drill_reviews import backup_workspace_file

        return backup_workspace_file(path, self.ctx.now())

    def begin_drill_review(self, drill_id: str):
        return self.workspace / f"{drill_id}.py", None

    def drill_proposal(self, drill_id: str):
        return None

    def drill_hints_shown(self, drill_id: str) -> list:
        return []

    def drill_reference(self, drill_id: str):
        return None

    def drill_progress(self) -> list:
        from studyapp.drill_reviews import DrillProgress

        return [DrillProgress("sdpa", "Scaled dot-product attention", "failing", TODAY + timedelta(days=3),
                              False, 0, 2),
                DrillProgress("causal_mask", "Causal mask", "not started", None, False, 0, 0)]

    def drill_retention_by_week(self):
        return tuple((TODAY - timedelta(weeks=6 - i), 0.6 + i / 20) for i in range(6))

    def stats(self) -> StatsData:
        heatmap = {TODAY - timedelta(days=i): (i * 3) % 7 for i in range(200)}
        return StatsData(
            heatmap=heatmap,
            forecast=tuple((TODAY + timedelta(days=i), (i * 5) % 9) for i in range(30)),
            retention=(("7d", 0.91), ("30d", 0.88), ("365d", None)),
            retention_by_week=tuple((TODAY - timedelta(weeks=12 - i), 0.8 + i / 100) for i in range(12)),
            mastery_by_tag=(("Transformer", 0.62), ("注意力机制", 0.35)),
            drill_history=((TODAY - timedelta(days=2), 1, 2), (TODAY, 2, 0)),
        )

    def close(self) -> None:
        pass

    def notes_changed(self, paths) -> tuple[str, ...]:
        return ()
