"""The app left open while time passes: Today (and the Drills list) redraw themselves when the
clock reaches the moment their figures change (a learning step falling due, a drill falling
due, local midnight), without a key pressed, and never under a review session; Stats on a new
day.

The real facade, vault and database on a frozen clock that the tests move; the app's clock
check runs every `CLOCK_CHECK_SECONDS`, shortened here so no test waits half a minute.
"""

from __future__ import annotations

import asyncio
from datetime import datetime

import pytest
from textual.widgets import DataTable, Static

from studyapp.context import build_context
from studyapp.facade import StudyFacade
from studyapp.tui import app as app_module
from studyapp.tui.app import StudyApp
from studyapp.tui.screens.drills import DrillsScreen
from studyapp.tui.screens.review import ReviewScreen
from studyapp.tui.screens.today import TodayScreen

from .conftest import settle

CHECK_EVERY = 0.02
"""The clock check's interval in these tests, in seconds."""

NOTE = """---
created: 2026-01-01
last_reviewed:
next_review:
review_count: 0
mastery_level: 0.0
---
# Note {n}

## Q
ans
"""


@pytest.fixture(autouse=True)
def _quick_clock_check(monkeypatch):
    monkeypatch.setattr(app_module, "CLOCK_CHECK_SECONDS", CHECK_EVERY)


def vault_ctx(tmp_path, now: str, new_per_day: int, notes: int = 4):
    """Four new notes, `new_per_day` of them a day, the clock frozen at `now` (local time)."""
    vault, data = tmp_path / "vault", tmp_path / "data"
    vault.mkdir()
    data.mkdir()
    (data / "config.toml").write_text(f"new_per_day = {new_per_day}\n", encoding="utf-8")
    for n in range(notes):
        (vault / f"n{n}.md").write_text(NOTE.format(n=n), encoding="utf-8")
    return build_context(vault=str(vault), data_dir=str(data), now=now, seed=False)


def move_clock(ctx, to: str) -> None:
    ctx.frozen_now = datetime.fromisoformat(to).astimezone()


async def let_time_pass(pilot) -> None:
    """Long enough for the clock check to run a few times, then whatever it started."""
    await asyncio.sleep(CHECK_EVERY * 5)
    await settle(pilot)


def today_figures(app) -> tuple[str, str, str, str]:
    screen = app.screen
    assert isinstance(screen, TodayScreen)
    return tuple(str(screen.query_one(f"#{name}", Static).render())  # type: ignore[return-value]
                 for name in ("due-counts", "reviewed-today", "streak", "today-hint"))


async def review(pilot, *ratings: str) -> None:
    """From Today: a session, each note revealed and rated, then back to Today."""
    await pilot.press("r")
    await settle(pilot)
    for rating in ratings:
        await pilot.press("space")
        await settle(pilot)
        await pilot.press(rating)
        await settle(pilot)
    await pilot.press("escape")
    await settle(pilot)


def count_calls(monkeypatch, study, name: str) -> list[int]:
    """Counts the calls of `study.<name>` (one item each)."""
    calls: list[int] = []
    method = getattr(study, name)

    def counted(*args, **kwargs):
        calls.append(1)
        return method(*args, **kwargs)

    monkeypatch.setattr(study, name, counted)
    return calls


async def test_today_turns_over_at_midnight_while_left_open(tmp_path, monkeypatch):
    """Two new notes a day, both reviewed at 23:40: past midnight Today offers the next two and
    counts no review today, the streak kept (yesterday counts), without a key pressed."""
    ctx = vault_ctx(tmp_path, "2026-03-01T23:40:00", new_per_day=2)
    app = StudyApp(ctx)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        assert today_figures(app)[0] == "2 · 0 · 0"
        await review(pilot, "4", "4")
        figures = today_figures(app)
        assert figures[:3] == ("0 · 0 · 0", "2", "1 day") and figures[3].startswith("Nothing due")

        today_calls = count_calls(monkeypatch, app.study, "today")
        move_clock(ctx, "2026-03-01T23:59:30")  # not yet: nothing is computed again
        await let_time_pass(pilot)
        assert today_calls == [] and today_figures(app)[:3] == ("0 · 0 · 0", "2", "1 day")

        move_clock(ctx, "2026-03-02T00:30:00")
        await let_time_pass(pilot)
        figures = today_figures(app)
        assert figures[:3] == ("2 · 0 · 0", "0", "1 day")
        assert figures[3].startswith("2 notes waiting")
        assert len(today_calls) == 1  # once, not at every check

        await let_time_pass(pilot)  # the next horizon is in the future: nothing more
        assert len(today_calls) == 1

        move_clock(ctx, "2026-03-03T00:30:00")  # a day with no review in between: the streak ends
        await let_time_pass(pilot)
        assert today_figures(app)[:3] == ("2 · 0 · 0", "0", "0 days")


async def test_today_shows_a_learning_step_once_it_falls_due(tmp_path, monkeypatch):
    """Good on a new note puts it in a learning step minutes away: Today says "Nothing due"
    until the step falls due, then counts it, without a key pressed."""
    ctx = vault_ctx(tmp_path, "2026-03-01T10:00:00", new_per_day=1)
    app = StudyApp(ctx)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await review(pilot, "3")
        assert today_figures(app)[0] == "0 · 0 · 0"
        (step,) = [item.card.due for item in app.study.vault.items() if item.card.due > ctx.now()
                   and item.card.due.date() == ctx.now().date()]

        move_clock(ctx, (step - (step - ctx.now()) / 2).isoformat())  # half way: not yet
        today_calls = count_calls(monkeypatch, app.study, "today")
        await let_time_pass(pilot)
        assert today_calls == [] and today_figures(app)[0] == "0 · 0 · 0"

        move_clock(ctx, step.isoformat())
        await let_time_pass(pilot)
        figures = today_figures(app)
        assert figures[0] == "0 · 1 · 0" and figures[3].startswith("1 note waiting")


async def test_a_review_session_keeps_its_queue_when_midnight_passes(tmp_path, monkeypatch):
    """A session open across midnight is left alone (its queue is the one it began with); Today,
    once back on it, shows the new day."""
    ctx = vault_ctx(tmp_path, "2026-03-01T23:50:00", new_per_day=2)
    app = StudyApp(ctx)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("r")
        await settle(pilot)
        await pilot.press("space")
        await settle(pilot)
        await pilot.press("4")
        await settle(pilot)
        session = app.screen
        assert isinstance(session, ReviewScreen) and session.card is not None
        shown = [str(w.render()) for w in session.query(Static)]
        today_calls = count_calls(monkeypatch, app.study, "today")
        counts_calls = count_calls(monkeypatch, app.study, "today_counts")
        begin_calls = count_calls(monkeypatch, app.study, "begin_review")

        move_clock(ctx, "2026-03-02T00:30:00")
        await let_time_pass(pilot)
        assert app.screen is session
        assert [str(w.render()) for w in session.query(Static)] == shown
        assert today_calls == counts_calls == begin_calls == []

        await pilot.press("escape")
        await settle(pilot)
        # one note reviewed yesterday; the new day offers two of the three left
        assert today_figures(app)[:3] == ("2 · 0 · 0", "0", "1 day")


async def test_the_drills_list_says_due_now_once_a_drill_falls_due(tmp_path):
    """A drill due at 10:00 in two days: the Drills list, left open, shows its date until then
    and "due now" from then on."""
    ctx = vault_ctx(tmp_path, "2026-03-01T10:00:00", new_per_day=1, notes=0)
    study = StudyFacade(ctx)
    try:
        study.load()
        study.begin_drill_review("sdpa")
        due = study.record_drill_review("sdpa", 3).due
    finally:
        study.close()
    assert due.date().isoformat() == "2026-03-03"
    app = StudyApp(ctx)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("d")
        await settle(pilot)
        assert isinstance(app.screen, DrillsScreen)

        def next_due() -> str:
            table = app.screen.query_one(DataTable)
            return str(table.get_cell("sdpa", table.ordered_columns[2].key))

        assert next_due() == "2026-03-03"
        move_clock(ctx, "2026-03-03T09:00:00")  # the day has come, the hour not yet
        await let_time_pass(pilot)
        assert next_due() == "2026-03-03"
        move_clock(ctx, due.isoformat())
        await let_time_pass(pilot)
        assert "due now" in next_due()


async def test_stats_left_open_are_computed_again_on_a_new_day(tmp_path, monkeypatch):
    """Stats are by day (the calendar, the forecast): computed again past midnight, not before."""
    ctx = vault_ctx(tmp_path, "2026-03-01T23:40:00", new_per_day=2)
    app = StudyApp(ctx)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("S")
        await settle(pilot)
        stats_calls = count_calls(monkeypatch, app.study, "stats")
        move_clock(ctx, "2026-03-01T23:59:00")
        await let_time_pass(pilot)
        assert stats_calls == []
        move_clock(ctx, "2026-03-02T00:01:00")
        await let_time_pass(pilot)
        assert len(stats_calls) == 1


async def test_today_follows_the_clock_set_back(tmp_path):
    """A clock set back (by hand, or corrected after a wrong one) before the moment Today was
    computed: the figures are computed again for the clock's day."""
    ctx = vault_ctx(tmp_path, "2026-03-02T00:30:00", new_per_day=2)
    app = StudyApp(ctx)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await review(pilot, "4", "4")
        assert today_figures(app)[:2] == ("0 · 0 · 0", "2")
        move_clock(ctx, "2026-03-01T23:00:00")
        await let_time_pass(pilot)
        assert today_figures(app)[:2] == ("0 · 0 · 0", "0")
