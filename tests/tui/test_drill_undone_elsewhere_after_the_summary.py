"""Found in tmux: the session's last item was a drill, rated in the app; the review screen
says "Session complete." Another shell runs `studyapp undo`, which takes that drill review
back: the drill is due again (`studyapp due` lists it), but the app keeps showing "Session
complete." for good. A note's rating undone elsewhere after the summary brings the note back
(`reopen`), and `u` pressed in the app brings the drill back too; an undo made elsewhere of a
drill's rating leaves the screen saying there is nothing left to do."""

from __future__ import annotations

from .conftest import app_with_grader, settle, wait_for
from .test_tui_drill_reviews import PASS, ScriptedGrader
from .test_tui_side_by_side import other_shell

NOTE = """---
created: '2026-10-01'
last_reviewed: '2026-11-12'
next_review: '2026-11-22'
review_count: 3
difficulty: medium
mastery_level: 0.4
drills: [sdpa]
tags: [attention]
---
# Why scale attention scores by sqrt(d_k)

## 面试标准答案
The dot products grow with d_k; scaling keeps the softmax out of saturation.
"""


async def test_a_drill_rating_undone_elsewhere_after_the_summary_offers_the_drill_again(ctx):
    (ctx.paths.vault_dir / "scale.md").write_text(NOTE, encoding="utf-8")
    app = app_with_grader(ctx, ScriptedGrader(PASS))
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("r")
        await settle(pilot)
        review = app.screen
        await pilot.press("space", "3")  # the note
        await settle(pilot)
        assert review.card is None and review.due_drill is not None and review.due_drill.id == "sdpa"
        await pilot.press("enter")
        await settle(pilot)
        await pilot.press("ctrl+r")  # the pass
        await settle(pilot)
        assert app.screen.proposal is not None
        await pilot.press("f6", "enter")  # accepted: back to the session, which is complete
        await settle(pilot)
        assert app.screen is review and review.finished and review.due_drill is None
        assert app.study.service.store.drill_card("sdpa") is not None

        other_shell(ctx, "undo")  # takes the drill's review back: it is due again
        assert any(d.id == "sdpa" for d in app.study.due_drills())
        await wait_for(pilot, lambda: review.due_drill is not None, seconds=12)

        assert review.due_drill is not None and review.due_drill.id == "sdpa", (
            "the screen still says 'Session complete.' though the drill rated in it is due again")
