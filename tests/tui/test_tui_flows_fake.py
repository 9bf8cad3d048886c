"""Screen mechanics against an in-memory session: keys reach the right session calls and the
screens show what the session returned."""

from __future__ import annotations

from textual.widgets import Button, DataTable, Static, TextArea

from studyapp.tui.app import StudyApp
from studyapp.tui.screens.drill import DrillScreen
from studyapp.tui.screens.review import ReviewScreen
from studyapp.tui.widgets.answer import Answer

from .conftest import settle
from .fake_study import FakeStudy


def make_app(ctx, tmp_path, **kwargs) -> tuple[StudyApp, FakeStudy]:
    session = FakeStudy(tmp_path / "workspace", **kwargs)
    return StudyApp(ctx, study=session), session


async def test_today_shows_the_session_figures(ctx, tmp_path):
    app, _ = make_app(ctx, tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        assert str(app.query_one("#due-counts", Static).render()) == "1 · 0 · 1"
        assert str(app.query_one("#streak", Static).render()) == "4 days"


async def test_review_reveal_rate_undo_and_again_returns(ctx, tmp_path):
    app, session = make_app(ctx, tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press("r")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, ReviewScreen)
        first = screen.card
        await pilot.press("3")  # rating before reveal does nothing
        assert session.calls == []
        await pilot.press("space")
        assert screen.revealed
        assert "3d" in str(screen.query_one("#rate-3", Button).label)
        await pilot.press("1")
        assert session.calls == [("rate", first.path, 1)]
        assert screen.card.path != first.path
        await pilot.press("u")
        assert screen.card.path == first.path and not screen.revealed
        await pilot.press("ctrl+z")  # nothing left to undo: the screen stays on the same card
        assert screen.card.path == first.path
        await pilot.press("space")
        await pilot.click("#rate-4")  # the mouse rates too
        assert session.calls[-1] == ("rate", first.path, 4)
        await pilot.press("space")  # a click must not steal the keyboard from the screen
        assert screen.revealed
        await pilot.press("u")
        await pilot.press("space", "3", "space", "3")
        await settle(pilot)
        assert screen.card is None and screen.finished
        assert "Session complete" in str(screen.query_one("#review-summary", Static).render())


async def test_suspend_skips_the_note(ctx, tmp_path):
    app, session = make_app(ctx, tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press("r")
        await settle(pilot)
        first = app.screen.card
        await pilot.press("s")
        assert ("suspend", first.path) in session.calls
        assert app.screen.card.path != first.path


async def test_full_note_shows_the_body(ctx, tmp_path):
    app, _ = make_app(ctx, tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press("r")
        await settle(pilot)
        await pilot.press("f")
        await settle(pilot)
        answer = app.screen.query_one("#answer", Answer)
        assert answer.source == app.screen.card.body
        assert answer.visible


async def test_edit_without_editor_notifies(ctx, tmp_path, monkeypatch):
    monkeypatch.delenv("EDITOR", raising=False)
    monkeypatch.delenv("VISUAL", raising=False)
    app, _ = make_app(ctx, tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press("r")
        await settle(pilot)
        await pilot.press("e")
        assert any("EDITOR" in n.message for n in app._notifications)


async def test_drill_run_grades_saved_text_and_shows_checks(ctx, tmp_path):
    app, session = make_app(ctx, tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await pilot.press("d")
        await settle(pilot)
        await pilot.press("enter")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, DrillScreen)
        editor = screen.query_one("#code", TextArea)
        editor.text = "def scaled_dot_product_attention(q, k, v):\n    return v\n"
        await pilot.press("ctrl+r")
        await settle(pilot)
        assert (tmp_path / "workspace" / "sdpa.py").read_text() == editor.text
        assert session.calls[-1] == ("grade", "sdpa", editor.text)
        assert screen.query_one("#checks", DataTable).row_count == 2
        assert "FAIL" in str(screen.query_one("#grade-status", Static).render())


async def test_rating_error_becomes_a_notification(ctx, tmp_path):
    app, session = make_app(ctx, tmp_path)

    def broken(*args, **kwargs):
        raise PermissionError("note.md is read-only")

    session.rate = broken
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press("r")
        await settle(pilot)
        await pilot.press("space", "3")
        assert any("read-only" in n.message for n in app._notifications)
        assert app.screen.card is not None
