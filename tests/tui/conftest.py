"""TUI fixtures: a frozen clock, app factories (one over a shared real grader), and `settle` that waits for workers instead of sleeping."""

from __future__ import annotations

import asyncio
import inspect
import time

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


SETTLE_ROUNDS = 50
"""More rounds than any screen needs to go quiet (a load, then a refresh, then its workers);
past them `settle` returns, as the three fixed rounds it replaced always did."""


def pending_work(app) -> bool:
    """Whether the app still has something to do: a worker running, a message queued on any
    screen (not only the current one) or the app, a callback waiting for the next refresh.
    The queues of callbacks are Textual's own attributes (textual is pinned in pyproject.toml)."""
    if any(not worker.is_finished for worker in app.workers):
        return True
    screens = [screen for stack in app._screen_stacks.values() for screen in stack]
    nodes = [app, *(node for screen in screens for node in screen.walk_children(with_self=True))]
    return (any(node.message_queue_size or node._next_callbacks for node in nodes)
            or any(screen._callbacks for screen in screens))


def screen_lines(app, region=None) -> list[str]:
    """The terminal's rows as the user sees them now: every widget composited (scroll bars,
    borders and layers over what they cover), as `App.export_screenshot` draws them, as text;
    with `region` (a widget's), only its part of the screen, cut by cells (a Chinese
    character is two)."""
    import io

    from rich.cells import cell_len
    from rich.console import Console

    width, height = app.size
    console = Console(width=width, height=height, file=io.StringIO(), force_terminal=True,
                      color_system="truecolor", record=True, legacy_windows=False, safe_box=False)
    console.print(app.screen._compositor.render_update(full=True, screen_stack=app._background_screens))
    lines = console.export_text(styles=False).splitlines()
    if region is None:
        return lines
    cropped = []
    for line in lines[region.y:region.bottom]:
        cells = []  # one entry a cell: a wide character, then "" for its second cell
        for ch in line.ljust(width):
            cells += [ch] + [""] * (cell_len(ch) - 1)
        cropped.append("".join(cells[region.x:region.right]))
    return cropped


def notified(app, text: str) -> bool:
    """Whether a notification shown so far holds `text`."""
    return any(text in n.message for n in app._notifications)


async def settle(pilot) -> None:
    """Let every worker finish and every message be handled; stop cursors blinking for snapshots.

    Rounds of a pause (the messages queued so far handled, the process idle) and a wait for the
    workers, until a round leaves nothing pending: a handler that starts a worker, or a callback
    after a refresh that posts more, gets another round, and an app with nothing to do costs one
    pause instead of a fixed five."""
    app = pilot.app
    for _ in range(SETTLE_ROUNDS):
        await pilot.pause()
        if any(not worker.is_finished for worker in app.workers):
            await app.workers.wait_for_complete()
            continue
        if pending_work(app):
            continue
        blinking = [widget for widget in app.screen.query("Input, TextArea") if widget.cursor_blink]
        if not blinking:
            return
        for widget in blinking:  # the next round draws the steady cursor
            widget.cursor_blink = False


async def wait_for(pilot, condition, seconds: float = 10.0) -> None:
    """Pause until `condition()` holds (the vault watcher reports within a second), then settle."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and not condition():
        await pilot.pause(0.1)
    await settle(pilot)


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
