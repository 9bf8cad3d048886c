"""4b37192 puts a drill rated in the app on the session's undo stack, above a suspension made
before it. When that drill rating is taken back elsewhere (`studyapp undo` in another shell),
the stack keeps its entry (`undone_elsewhere` clears only notes' ratings): `u` then sees a
rating on top, not the suspension, and `undo_newest_review` takes back the newest review left
-- the note rated at the start of the session -- while the suspension, the newest change
still standing, stays. Before 4b37192 `u` resumed the suspended note."""

from __future__ import annotations

from studyapp.tui.screens.drill import DrillScreen
from studyapp.tui.screens.review import ReviewScreen

from .conftest import app_with_grader, settle
from .test_tui_drill_reviews import NOTE, PASS, ScriptedGrader
from .test_tui_side_by_side import other_shell
from .test_undo_takes_back_a_drill_rated_after_a_suspension import OTHER


async def test_u_after_the_drill_rating_was_undone_elsewhere_resumes_the_suspension(ctx):
    (ctx.paths.vault_dir / "scale.md").write_text(NOTE, encoding="utf-8")
    (ctx.paths.vault_dir / "other.md").write_text(OTHER, encoding="utf-8")
    app = app_with_grader(ctx, ScriptedGrader(PASS, PASS))
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("r")
        await settle(pilot)
        review = app.screen
        assert isinstance(review, ReviewScreen) and review.card is not None
        assert review.card.path == "scale.md"
        await pilot.press("space", "3")  # scale.md rated
        await settle(pilot)
        assert review.card is not None and review.card.path == "other.md"
        await pilot.press("s")  # other.md suspended
        await settle(pilot)
        assert review.due_drill is not None and review.due_drill.id == "sdpa"
        await pilot.press("enter")
        await settle(pilot)
        assert isinstance(app.screen, DrillScreen)
        await pilot.press("ctrl+r")
        await settle(pilot)
        await pilot.press("f6", "3")  # the drill rated Good
        await settle(pilot)
        store = app.study.service.store
        assert app.screen is review and len(store.drill_reviews("sdpa")) == 1

        other_shell(ctx, "undo")  # takes the drill's rating back
        assert store.drill_reviews("sdpa") == []
        await settle(pilot)

        await pilot.press("u")
        await settle(pilot)
        suspended = store.conn.execute(
            "SELECT c.suspended FROM cards c JOIN notes n ON n.key = c.note_key WHERE n.path = 'other.md'"
        ).fetchone()
        rated = store.conn.execute(
            "SELECT count(*) FROM reviews r JOIN notes n ON n.key = r.note_key WHERE n.path = 'scale.md'"
        ).fetchone()[0]
        assert rated == 1, "u took back the note rated before the suspension"
        assert suspended is None or suspended[0] == 0, "u left the suspension, the newest change (a new note resumed has no card)"
