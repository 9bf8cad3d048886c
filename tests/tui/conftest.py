"""TUI fixtures: a frozen clock, app factories (one over a shared real grader), and `settle` that waits for workers instead of sleeping."""

from __future__ import annotations

import asyncio
import inspect

import pytest

from studyapp.context import build_context

FROZEN_NOW = "2026-11-22T09:00:00+08:00"


@pytest.hookimpl(tryfirst=True)
def pytest_pyfunc_call(pyfuncitem):
    """Run `async def` tests on a fresh event loop (no pytest-asyncio dependency needed)."""
    if inspect.iscoroutinefunction(pyfuncitem.obj):
        names = pyfuncitem._fixtureinfo.argnames
        asyncio.run(pyfuncitem.obj(**{name: pyfuncitem.funcargs[name] for name in names}))
        return True
    return None


@pytest.fixture(autouse=True)
def _no_early_grader(monkeypatch):
    """The app starts the grader's worker (importing torch) when it opens; tests that do not
    test that leave it to the first grade, so a test of the notes spawns no process."""
    from studyapp.tui.app import StudyApp

    monkeypatch.setattr(StudyApp, "start_grader_early", False)


@pytest.fixture
def ctx(tmp_path):
    vault = tmp_path / "vault"
    vault.mkdir()
    return build_context(vault=str(vault), data_dir=str(tmp_path / "data"), now=FROZEN_NOW, seed=False)


async def settle(pilot) -> None:
    """Let every worker finish and every message be handled; stop cursors blinking for snapshots."""
    app = pilot.app
    for _ in range(3):
        await pilot.pause()
        await app.workers.wait_for_complete()
    await pilot.pause()
    for widget in app.screen.query("Input, TextArea"):
        widget.cursor_blink = False
    await pilot.pause()


@pytest.fixture
def shared_grader(warm_grader):
    """The real grader on the real drills, already started, for a test that needs a real one but
    not a fresh one (a test of starting, closing or configuring the grader builds its own)."""
    from grader_helpers import Lent

    return Lent(warm_grader)


def real_app(ctx, shared_grader):
    """The real app over the real facade and a shared real grader (see `shared_grader`)."""
    return app_with_grader(ctx, shared_grader)


def app_with_grader(ctx, grader):
    """The real app over the real facade, handed a stand-in grader client at construction (as
    the app is handed its core), so no test reaches into the facade's private fields."""
    from studyapp.facade import StudyFacade
    from studyapp.tui.app import StudyApp

    return StudyApp(ctx, study=StudyFacade(ctx, make_grader=lambda _ctx: grader))
