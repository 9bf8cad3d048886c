"""The app and the CLI on one vault at once: what another shell does to this app's own work
(an undo of a rating its session gave, a drill try rated and a new one made meanwhile) is
taken in by the session, said in a few words, and never counted or applied twice.

The other writer is the real CLI, run as a subprocess on the same vault and data dir.
"""

from __future__ import annotations

import os
import subprocess
import sys
from datetime import timedelta
from pathlib import Path

from studyapp.tui.screens.drill import DrillScreen
from studyapp.tui.screens.review import ReviewScreen

from .conftest import app_with_grader, notified, settle, wait_for
from .sample_vault import write_vault
from .test_tui_drill_reviews import PASS, ScriptedGrader, text_of
from .test_tui_drills import StubGrader

ROOT = Path(__file__).resolve().parents[2]
SCALING = "注意力/缩放因子.md"

LONE_NOTE = """---
created: '2026-11-01'
last_reviewed: '2026-11-10'
next_review: '2026-11-20'
review_count: 3
difficulty: medium
mastery_level: 0.3
tags: [attention]
---
# Why do residual connections help deep networks train?

## 面试标准答案
They give the gradient a path around each block.
"""


def other_shell(ctx, *args: str, now: str | None = None) -> str:
    """Run `studyapp ARGS` in another process on the app's vault and data dir; its output."""
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    done = subprocess.run(
        [sys.executable, "-m", "studyapp", *args, "--vault", str(ctx.paths.vault_dir),
         "--data-dir", str(ctx.paths.data_dir), "--now", now or ctx.now().isoformat()],
        env=env, cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout


async def test_a_rating_undone_in_another_shell_is_due_again_in_this_session(ctx):
    """`studyapp undo` in another shell took back the rating this session gave: the session
    still counted it as reviewed, and the note came back only in the next session."""
    write_vault(ctx.paths.vault_dir)
    app = app_with_grader(ctx, StubGrader())
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await pilot.press("r")
        await settle(pilot)
        review = app.screen
        assert isinstance(review, ReviewScreen) and review.card.path == SCALING
        await pilot.press("space", "3")
        await settle(pilot)
        shown = review.card.path
        assert shown != SCALING and app.study.progress().reviewed == 1
        assert SCALING not in app.study.session.order, "rated Good: not due again today"

        assert f"undid the good review of {SCALING}" in other_shell(ctx, "undo")
        await wait_for(pilot, lambda: notified(app, "undone in another") or SCALING in app.study.session.order)

        assert app.study.service.store.reviews() == []
        assert app.study.progress().reviewed == 0 and app.study.summary().reviewed == 0
        assert SCALING in app.study.session.order, "due again in this session"
        assert review.card.path == shown, "the note on screen stays"
        assert "0 reviewed" in text_of(review, "#review-progress")
        assert notified(app, "undone in another"), [n.message for n in app._notifications]


async def test_a_rating_undone_elsewhere_after_the_summary_brings_the_note_back(ctx):
    """The session was over (its summary on screen) when another shell undid its one rating:
    the summary still said one note was reviewed, and the note could not be reviewed again."""
    (ctx.paths.vault_dir / "residual.md").write_text(LONE_NOTE, encoding="utf-8")
    app = app_with_grader(ctx, StubGrader())
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await pilot.press("r")
        await settle(pilot)
        review = app.screen
        assert isinstance(review, ReviewScreen) and review.card.path == "residual.md"
        await pilot.press("space", "3")
        await settle(pilot)
        assert review.card is None and review.finished
        assert "Reviewed 1 note" in text_of(review, "#review-summary")

        other_shell(ctx, "undo")
        await wait_for(pilot, lambda: review.card is not None)

        assert review.card is not None and review.card.path == "residual.md"
        assert not review.finished and app.study.progress().reviewed == 0
        assert notified(app, "undone in another")
        await pilot.press("space", "4")  # reviewed again here, counted once
        await settle(pilot)
        assert len(app.study.service.store.reviews()) == 1
        assert "Reviewed 1 note" in text_of(review, "#review-summary")


async def test_a_drill_rating_waits_for_its_own_try_not_a_newer_one_made_elsewhere(ctx):
    """The app graded a try and showed its proposal; meanwhile another shell rated that try and
    the next day gave up a new try of the same drill. The app's rating was recorded for that
    newer try, one it never saw (and the drill was counted twice)."""
    app = app_with_grader(ctx, ScriptedGrader(PASS))
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        app.action_open_drill("sdpa")
        await settle(pilot)
        drill = app.screen
        assert isinstance(drill, DrillScreen)
        await pilot.press("ctrl+r")
        await settle(pilot)
        assert drill.proposal is not None and drill.proposal.label == "Good"
        store = app.study.service.store

        other_shell(ctx, "rate-drill", "sdpa", "--rating", "again")  # this try, rated Again elsewhere
        tomorrow = (ctx.now() + timedelta(days=1)).isoformat()
        other_shell(ctx, "giveup", "sdpa", "--yes", now=tomorrow)  # a new try, finished there
        assert len(store.drill_reviews("sdpa")) == 1

        await pilot.press("f6", "4")
        await settle(pilot)

        (only,) = store.drill_reviews("sdpa")
        assert only.rating == 1, "the other shell's rating of this try stands alone"
        assert notified(app, "no longer waits"), [n.message for n in app._notifications]
        assert app.screen is drill, "nothing recorded: the screen stays"
