"""The front ends' old disagreements (issue 11), seen from the TUI: a note naming a drill
that does not exist, and the start-up repair of a crashed write, reach the learner as one
clear notification."""

from __future__ import annotations

from datetime import datetime, timezone

from studyapp.tui.app import StudyApp
from studyapp.tui.screens.review import ReviewScreen

from .conftest import real_app, settle

DUE_NOTE = """---
created: '2026-11-01'
last_reviewed: '2026-11-10'
next_review: '2026-11-20'
review_count: 3
difficulty: medium
mastery_level: 0.3
tags:
- 注意力
drills: [{drills}]
---
# 为什么要除以根号 d_k?

## 面试标准答案
方差随 d_k 增长。
"""


def notifications(app) -> list[str]:
    return [n.message for n in app._notifications]


async def test_practise_on_a_note_naming_an_unknown_drill_says_so_clearly(ctx):
    (ctx.paths.vault_dir / "scale.md").write_text(DUE_NOTE.format(drills="foo"), encoding="utf-8")
    app = StudyApp(ctx)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await pilot.press("r")
        await settle(pilot)
        assert isinstance(app.screen, ReviewScreen)
        await pilot.press("p")
        await settle(pilot)
        assert isinstance(app.screen, ReviewScreen), "no drill screen opens for an unknown id"
        messages = notifications(app)
        assert not any("unknown drill" in m for m in messages), messages
        (said,) = [m for m in messages if "foo" in m]
        assert "sdpa" in said, "the message names the drills there are"


async def test_a_known_and_an_unknown_drill_practise_the_known_one(ctx, shared_grader):
    from studyapp.tui.screens.drill import DrillScreen

    (ctx.paths.vault_dir / "scale.md").write_text(DUE_NOTE.format(drills="foo, sdpa"), encoding="utf-8")
    app = real_app(ctx, shared_grader)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await pilot.press("r")
        await settle(pilot)
        await pilot.press("p")
        await settle(pilot)
        assert isinstance(app.screen, DrillScreen) and app.screen.drill_id == "sdpa"


async def test_start_up_repairs_reach_the_learner(ctx):
    from studyapp.reviews import ReviewService

    (ctx.paths.vault_dir / "scale.md").write_text(DUE_NOTE.format(drills=""), encoding="utf-8")
    with ReviewService(ctx) as service:  # a review whose writer died before the file changed
        note = service.vault.read_note("scale.md")
        service.store.add_journal("review", "scale.md", note.content_hash, None,
                                  {"file_values": {"review_count": 4}},
                                  datetime(2026, 11, 22, tzinfo=timezone.utc))
    app = StudyApp(ctx)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        assert any("scale.md" in m and "interrupted review" in m for m in notifications(app)), \
            notifications(app)
