"""How each screen looks at 80×24 (the minimum) and 120×40, on a fixed vault with a frozen clock.

Update after an intended change with `pytest tests/tui/test_tui_snapshots.py --snapshot-update`
and look at the SVGs (tests/tui/__snapshots__/) before committing them.
"""

from __future__ import annotations

import pytest

from .conftest import app_with_grader, settle
from .sample_vault import write_vault
from .test_tui_drills import StubGrader

SIZES = [(80, 24), (120, 40)]


@pytest.fixture
def app(ctx):
    write_vault(ctx.paths.vault_dir)
    app = app_with_grader(ctx, StubGrader())
    return app


async def with_history(pilot) -> None:
    """Two reviews, so the heatmap, streak and forecast have something to draw."""
    await settle(pilot)
    await pilot.press("r")
    await settle(pilot)
    await pilot.press("space", "3", "space", "4", "escape")
    await settle(pilot)


async def quiet(pilot) -> None:
    pilot.app.clear_notifications()
    await settle(pilot)


async def steady(pilot, limit: float = 5.0) -> None:
    """Wait until two screenshots 0.2 s apart agree: under load the editor's highlighting and
    the verdict's pane can land in different frames, and a snapshot must show the last one."""
    import time

    deadline = time.monotonic() + limit
    before = pilot.app.export_screenshot()
    while time.monotonic() < deadline:
        await pilot.pause(0.2)
        now = pilot.app.export_screenshot()
        if now == before:
            return
        before = now


@pytest.mark.parametrize("size", SIZES)
def test_today(snap_compare, app, size):
    async def run_before(pilot):
        await with_history(pilot)
        await quiet(pilot)

    assert snap_compare(app, terminal_size=size, run_before=run_before)


@pytest.mark.parametrize("size", SIZES)
def test_review_revealed(snap_compare, app, size):
    async def run_before(pilot):
        await settle(pilot)
        await pilot.press("r")
        await settle(pilot)
        await pilot.press("space")
        await quiet(pilot)

    assert snap_compare(app, terminal_size=size, run_before=run_before)


@pytest.mark.parametrize("size", SIZES)
def test_drills(snap_compare, app, size):
    async def run_before(pilot):
        await settle(pilot)
        await pilot.press("d")
        await quiet(pilot)

    assert snap_compare(app, terminal_size=size, run_before=run_before)


@pytest.mark.parametrize("size", SIZES)
def test_drill_after_a_run(snap_compare, app, size):
    async def run_before(pilot):
        await settle(pilot)
        pilot.app.action_open_drill("causal_mask")
        await settle(pilot)
        await pilot.press("ctrl+r")
        await quiet(pilot)
        await steady(pilot)  # the editor's syntax highlighting can land after the verdict
        await quiet(pilot)

    assert snap_compare(app, terminal_size=size, run_before=run_before)


@pytest.mark.parametrize("size", [(80, 24), (120, 36)])
def test_drill_after_a_failing_run(snap_compare, ctx, size):
    """The verdict's summary, its "Looks like" line and the hint show above the checks."""
    from .test_tui_loop import NO_SCALING_VERDICT, VerdictGrader

    write_vault(ctx.paths.vault_dir)
    app = app_with_grader(ctx, VerdictGrader(NO_SCALING_VERDICT))

    async def run_before(pilot):
        await settle(pilot)
        pilot.app.action_open_drill("sdpa")
        await settle(pilot)
        await pilot.press("ctrl+r")
        await quiet(pilot)
        await steady(pilot)  # the editor's syntax highlighting can land after the verdict
        await quiet(pilot)

    assert snap_compare(app, terminal_size=size, run_before=run_before)


@pytest.mark.parametrize("size", SIZES)
def test_notes(snap_compare, app, size):
    async def run_before(pilot):
        await settle(pilot)
        await pilot.press("n")
        await quiet(pilot)

    assert snap_compare(app, terminal_size=size, run_before=run_before)


@pytest.mark.parametrize("size", SIZES)
def test_stats(snap_compare, app, size):
    async def run_before(pilot):
        await with_history(pilot)
        await pilot.press("S")
        await quiet(pilot)

    assert snap_compare(app, terminal_size=size, run_before=run_before)
