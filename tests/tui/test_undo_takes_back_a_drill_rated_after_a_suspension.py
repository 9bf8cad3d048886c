"""From the third TUI hunt: `u` undoes the newest change. A note suspended in the session and a
drill rated after it: `u` must take back the drill's rating (the newest), not the suspension."""

from __future__ import annotations

from studyapp.drills import catalog
from studyapp.tui.screens.drill import DrillScreen
from studyapp.tui.screens.review import ReviewScreen

from .conftest import app_with_grader, notified, settle
from .test_tui_drill_reviews import NOTE, PASS, ScriptedGrader

OTHER = """---
created: '2026-10-01'
last_reviewed: null
next_review: '2026-11-01'
review_count: 0
drills: []
tags: [misc]
---
# Another note

## 面试标准答案
Something else.
"""


async def test_u_after_a_drill_rated_past_a_suspension_takes_back_the_drill_rating(ctx):
    (ctx.paths.vault_dir / "scale.md").write_text(NOTE, encoding="utf-8")
    (ctx.paths.vault_dir / "other.md").write_text(OTHER, encoding="utf-8")
    app = app_with_grader(ctx, ScriptedGrader(PASS, PASS))
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("r")
        await settle(pilot)
        review = app.screen
        assert isinstance(review, ReviewScreen) and review.card is not None
        # the review note (scale.md) comes first, the new one after it
        assert review.card.path == "scale.md"
        await pilot.press("space", "3")
        await settle(pilot)
        assert review.card is not None and review.card.path == "other.md"
        await pilot.press("s")  # suspend the second note
        await settle(pilot)
        assert review.due_drill is not None and review.due_drill.id == "sdpa"
        await pilot.press("enter")
        await settle(pilot)
        assert isinstance(app.screen, DrillScreen)
        await pilot.press("ctrl+r")
        await settle(pilot)
        await pilot.press("f6", "3")  # the drill rated Good: the newest change
        await settle(pilot)
        store = app.study.service.store
        assert app.screen is review and len(store.drill_reviews("sdpa")) == 1

        await pilot.press("u")
        await settle(pilot)
        assert store.drill_reviews("sdpa") == [], (
            "u undid the older suspension instead of the drill rating made after it")
        assert notified(app, f"Undid the rating of “{catalog()['sdpa'].title}”")
