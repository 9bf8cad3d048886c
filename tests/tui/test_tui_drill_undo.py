"""`u` takes back a drill's rating as it takes back a note's: in the real app, over the real
facade and database, the newest review goes, whichever kind it was, and the drill is offered
again."""

from __future__ import annotations

from studyapp.drills import catalog
from studyapp.tui.screens.drill import DrillScreen
from studyapp.tui.screens.review import ReviewScreen

from .conftest import app_with_grader, notified, settle
from .test_tui_drill_reviews import NOTE, PASS, ScriptedGrader, text_of


async def test_u_after_rating_a_drill_in_the_session_takes_that_rating_back(ctx):
    (ctx.paths.vault_dir / "scale.md").write_text(NOTE, encoding="utf-8")
    app = app_with_grader(ctx, ScriptedGrader(PASS, PASS))
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("r")
        await settle(pilot)
        review = app.screen
        assert isinstance(review, ReviewScreen)
        await pilot.press("space", "3")  # the note
        await settle(pilot)
        assert review.due_drill is not None and review.due_drill.id == "sdpa"
        await pilot.press("enter")
        await settle(pilot)
        assert isinstance(app.screen, DrillScreen)
        await pilot.press("ctrl+r")  # the pass
        await settle(pilot)
        await pilot.press("f6", "3")  # rated Good: back in the session, on the next drill
        await settle(pilot)
        store = app.study.service.store
        assert app.screen is review and len(store.drill_reviews("sdpa")) == 1
        assert review.due_drill is not None and review.due_drill.id == "mha"

        await pilot.press("u")
        await settle(pilot)
        assert notified(app, f"Undid the rating of “{catalog()['sdpa'].title}”")
        assert store.drill_reviews("sdpa") == [] and store.drill_card("sdpa") is None
        assert len(store.reviews()) == 1, "the note's review stays"
        assert review.due_drill is not None and review.due_drill.id == "sdpa"  # offered again
        assert catalog()["sdpa"].title in text_of(review, "#question")

        await pilot.press("u")  # then the note's rating, the next newest
        await settle(pilot)
        assert store.reviews() == [] and review.card is not None and review.card.path == "scale.md"
