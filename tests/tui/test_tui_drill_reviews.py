"""A due drill in the day's session, with the real facade and database and a stub grader:
it follows the notes, a wrong run and a hint make the proposed rating Hard, accepting it moves
the drill's due date as FSRS says, and a second drill passed first time is proposed Good."""

from __future__ import annotations

from fsrs import Rating
from textual.widgets import Static, TextArea

from studyapp.drill_reviews import drill_scheduler, new_drill_card
from studyapp.schedule import review as fsrs_review
from studyapp.tui.screens.drill import DrillScreen
from studyapp.tui.screens.review import REPEAT_GUARD, ReviewScreen

from .conftest import app_with_grader, real_app, settle

NOTE = """---
created: '2026-10-01'
last_reviewed: '2026-11-12'
next_review: '2026-11-22'
review_count: 3
difficulty: medium
mastery_level: 0.4
drills: [sdpa, mha]
tags: [attention]
---
# Why scale attention scores by sqrt(d_k)

## 面试标准答案
The dot products grow with d_k; scaling keeps the softmax out of saturation.
"""

FAIL = {"status": "fail", "summary": "values differ (looks like: no scaling)", "hint": "",
        "checks": [{"name": "values", "tier": "core", "status": "fail", "message": "max error 0.3"}],
        "seconds": 0.2}
PASS = {"status": "pass", "summary": "all checks pass", "hint": "",
        "checks": [{"name": "values", "tier": "core", "status": "pass", "message": ""}], "seconds": 0.2}


class ScriptedGrader:
    """Answers each grade with the next verdict of its script."""

    def __init__(self, *verdicts: dict) -> None:
        self.verdicts = list(verdicts)
        self.graded: list[str] = []

    def grade(self, drill_id, path, device="auto", timeout=None):
        self.graded.append(drill_id)
        return dict(self.verdicts.pop(0), drill=drill_id)

    def cancel(self):
        pass

    def close(self):
        pass


def text_of(screen, selector: str) -> str:
    return str(screen.query_one(selector, Static).render())


async def test_a_due_drill_in_the_session_hint_and_wrong_run_make_it_hard_then_good(ctx):
    (ctx.paths.vault_dir / "scale.md").write_text(NOTE, encoding="utf-8")
    grader = ScriptedGrader(FAIL, PASS, PASS)
    app = app_with_grader(ctx, grader)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("r")
        await settle(pilot)
        review = app.screen
        assert isinstance(review, ReviewScreen) and review.card is not None
        await pilot.press("space", "3")  # the note first
        await settle(pilot)

        # the notes are done: the drill paired with the reviewed note appears
        assert review.card is None and review.due_drill is not None
        assert review.due_drill.id == "sdpa" and "New drill" in text_of(review, "#question")
        await pilot.press("enter")
        await settle(pilot)
        drill = app.screen
        assert isinstance(drill, DrillScreen) and drill.drill_id == "sdpa"

        # a wrong run (of the learner's own code: the untouched starter is no run of theirs)
        drill.query_one("#code", TextArea).text = "def sdpa(q, k, v):\n    return q\n"
        await pilot.press("ctrl+r")
        await settle(pilot)
        assert drill.proposal is None
        await pilot.press("f2")  # a hint
        await settle(pilot)
        assert "Hint 1/" in text_of(drill, "#drill-hints")
        await pilot.press("ctrl+r")  # the pass
        await settle(pilot)
        assert drill.proposal is not None and drill.proposal.rating is Rating.Hard
        assert "Proposed rating: Hard" in text_of(drill, "#drill-proposal")

        await pilot.press("f6", "enter")  # the learner goes to the results and accepts
        await settle(pilot)
        store = app.study.service.store
        now = ctx.now()
        expected = fsrs_review(drill_scheduler(app.study.service.scheduler), new_drill_card(now),
                               Rating.Hard, now)
        card = store.drill_card("sdpa")
        assert card is not None and card.due == expected.due and card.due > now
        (row,) = store.drill_reviews("sdpa")
        assert (row.rating, row.proposed, row.hints, row.failed_runs) == (2, 2, 1, 1)

        # back in the session: the second new drill, passed on the first run
        assert app.screen is review and review.due_drill is not None and review.due_drill.id == "mha"
        await pilot.pause(REPEAT_GUARD)  # a deliberate Enter, not the accepting one pressed twice
        await pilot.press("enter")
        await settle(pilot)
        second = app.screen
        assert isinstance(second, DrillScreen) and second.drill_id == "mha"
        await pilot.press("ctrl+r")
        await settle(pilot)
        assert second.proposal is not None and second.proposal.rating is Rating.Good
        await pilot.press("f6", "enter")
        await settle(pilot)
        assert store.drill_reviews("mha")[0].rating == Rating.Good
        assert app.screen is review and review.due_drill is None and review.finished
        assert grader.graded == ["sdpa", "sdpa", "mha"]


async def test_one_to_four_override_the_proposed_rating(ctx):
    (ctx.paths.vault_dir / "scale.md").write_text(NOTE, encoding="utf-8")
    app = app_with_grader(ctx, ScriptedGrader(PASS))
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        app.action_open_drill("sdpa")
        await settle(pilot)
        drill = app.screen
        await pilot.press("ctrl+r")
        await settle(pilot)
        assert drill.proposal is not None and drill.proposal.rating is Rating.Good
        await pilot.press("f6", "4")
        await settle(pilot)
        (row,) = app.study.service.store.drill_reviews("sdpa")
        assert (row.rating, row.proposed) == (4, 3)
        assert not isinstance(app.screen, DrillScreen)


async def test_give_up_asks_first_then_shows_the_reference_and_proposes_again(ctx, shared_grader):
    """The reference solution (the drill folder's `reference.py`) shows only after an explicit give-up."""
    from studyapp.paths import kernels_dir

    reference = (kernels_dir() / "sdpa" / "reference.py").read_text(encoding="utf-8")
    app = real_app(ctx, shared_grader)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        app.action_open_drill("sdpa")
        await settle(pilot)
        drill = app.screen
        assert isinstance(drill, DrillScreen) and not drill.query_one("#reference").display
        await pilot.press("f2", "f2")
        await settle(pilot)
        assert "Hint 2/" in text_of(drill, "#drill-hints")
        await pilot.press("f3")
        await settle(pilot)
        await pilot.press("n")  # not yet
        await settle(pilot)
        assert drill.proposal is None and not drill.query_one("#reference").display
        await pilot.press("f3")
        await settle(pilot)
        await pilot.press("y")
        await settle(pilot)
        assert drill.proposal is not None and drill.proposal.rating is Rating.Again
        assert drill.query_one("#reference").display
        assert drill.query_one("#reference", Static).content.code.strip() == reference.strip()
        await pilot.press("enter")
        await settle(pilot)
        (row,) = app.study.service.store.drill_reviews("sdpa")
        assert (row.rating, row.gave_up, row.hints) == (1, 1, 2)


class HeldGrader(ScriptedGrader):
    """A ScriptedGrader whose answer waits until `release` is set: the learner types meanwhile."""

    def __init__(self, *verdicts: dict) -> None:
        super().__init__(*verdicts)
        import threading

        self.release = threading.Event()

    def grade(self, drill_id, path, device="auto", timeout=None):
        self.release.wait(20)
        return super().grade(drill_id, path, device, timeout)


async def test_typing_on_after_a_run_that_passes_keeps_the_keys_as_text(ctx):
    """The pass moved the focus to the results while the learner typed on: the next `1` rated
    the drill Again and closed it, and the rest of the typing was lost."""
    from textual.widgets import TextArea

    grader = HeldGrader(PASS)
    app = app_with_grader(ctx, grader)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        app.action_open_drill("sdpa")
        await settle(pilot)
        drill = app.screen
        editor = drill.query_one("#code", TextArea)
        assert drill.focused is editor
        await pilot.press("ctrl+r")
        await pilot.press(*"# x1")  # typed while the grader runs
        grader.release.set()
        await settle(pilot)
        await pilot.press(*" ok4")  # and on, after the verdict came
        await settle(pilot)
        assert drill.proposal is not None and app.screen is drill and drill.focused is editor
        assert "# x1 ok4" in editor.text
        assert app.study.service.store.drill_reviews("sdpa") == []
        assert "F6" in text_of(drill, "#drill-proposal")  # how to reach the rating keys
        await pilot.press("f6")
        await pilot.press("enter")
        await settle(pilot)
        (row,) = app.study.service.store.drill_reviews("sdpa")
        assert row.rating == row.proposed == Rating.Good


async def test_typing_on_after_waiting_for_a_pass_keeps_the_keys_as_text(ctx):
    """The learner ran the grader, waited for the verdict, and went on editing: the pass had
    moved the focus to the results, so the new line's Enter recorded the proposed rating and
    closed the drill (a `1` would have rated it Again). A run never takes the focus from the
    editor; F6 reaches the rating keys."""
    app = app_with_grader(ctx, ScriptedGrader(PASS))
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        app.action_open_drill("sdpa")
        await settle(pilot)
        drill = app.screen
        editor = drill.query_one("#code", TextArea)
        await pilot.press("ctrl+r")
        await settle(pilot)  # the verdict is in: PASS, and a rating is proposed
        assert drill.proposal is not None
        await pilot.press("enter", *"x = 1")
        await settle(pilot)
        assert app.screen is drill and drill.focused is editor and "x = 1" in editor.text
        assert app.study.service.store.drill_reviews("sdpa") == []
        assert "F6" in text_of(drill, "#drill-proposal")


async def test_a_try_rated_elsewhere_is_not_rated_again(ctx):
    """`studyapp rate-drill` from another shell rated the try; the screen still offered 1-4 and
    `3` recorded a second review of the same try."""
    from studyapp.cli import main

    app = app_with_grader(ctx, ScriptedGrader(PASS))
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        app.action_open_drill("sdpa")
        await settle(pilot)
        drill = app.screen
        await pilot.press("ctrl+r")
        await settle(pilot)
        assert drill.proposal is not None
        assert main(["rate-drill", "sdpa", "--vault", str(ctx.paths.vault_dir),
                     "--data-dir", str(ctx.paths.data_dir), "--now", ctx.now().isoformat()]) == 0
        await pilot.press("f6", "3")
        await settle(pilot)
        assert len(app.study.service.store.drill_reviews("sdpa")) == 1
        assert any("rated" in n.message and "elsewhere" in n.message for n in app._notifications)
        assert drill.proposal is None


async def test_an_outside_save_the_drill_cannot_read_keeps_the_learners_code(ctx):
    """A Latin-1 editor saving the drill's file (or its folder replaced) ended the app and lost
    the code typed in it."""
    from textual.widgets import TextArea

    app = app_with_grader(ctx, ScriptedGrader())
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        app.action_open_drill("sdpa")
        await settle(pilot)
        drill = app.screen
        editor = drill.query_one("#code", TextArea)
        editor.insert("my_unsaved_work = 42\n")
        with drill.path.open("ab") as handle:
            handle.write(b"# caf\xe9\n")
        await pilot.pause(1.5)  # the file is polled every second
        await settle(pilot)
        assert app.screen is drill and "my_unsaved_work = 42" in editor.text
        assert any("UTF-8" in n.message for n in app._notifications)
        await pilot.press("escape")  # leaving still saves what was typed, over the unreadable file
        await settle(pilot)
        assert "my_unsaved_work = 42" in drill.path.read_text(encoding="utf-8")
    assert app.return_code in (None, 0)


async def test_reopening_a_drill_that_waits_for_its_rating_keeps_the_keys_as_text(ctx):
    """Reopened with its try passed but not rated, the drill put the focus on the results: the
    learner typing `x = 1` rated it Again and closed it. It opens with its editor focused."""
    from textual.widgets import TextArea

    app = app_with_grader(ctx, ScriptedGrader(PASS))
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        app.action_open_drill("sdpa")
        await settle(pilot)
        await pilot.press("ctrl+r")
        await settle(pilot)
        assert app.screen.proposal is not None
        await pilot.press("escape")
        await settle(pilot)
        app.action_open_drill("sdpa")
        await settle(pilot)
        drill = app.screen
        editor = drill.query_one("#code", TextArea)
        assert isinstance(drill, DrillScreen) and drill.proposal is not None and drill.focused is editor
        await pilot.press(*"x = 1")
        await settle(pilot)
        assert app.screen is drill and "x = 1" in editor.text
        assert app.study.service.store.drill_reviews("sdpa") == []
        assert "F6" in text_of(drill, "#drill-proposal")
