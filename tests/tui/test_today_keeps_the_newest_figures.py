"""Today's figures are computed in a worker that a newer computation cancels (`exclusive`), but a
cancelled thread worker runs on: the older run, slower (a big vault loading, a slow disk), posted
its figures after the newer one, and Today showed the older counts until the next refresh. A
cancelled computation posts nothing."""

from __future__ import annotations

import dataclasses
import threading

from studyapp.facade import StudyFacade
from studyapp.tui.app import StudyApp
from studyapp.tui.screens.today import TodayScreen

from .conftest import settle
from .sample_vault import write_vault


class SlowFirstToday(StudyFacade):
    """Today's figures as a real facade computes them, but the first computation after `hold()`
    waits until `release` is set, and reports one more note reviewed than there is."""

    def __init__(self, ctx):
        super().__init__(ctx)
        self.held = threading.Event()
        self.release = threading.Event()
        self.holding = False

    def today(self, *args, **kwargs):
        summary = super().today(*args, **kwargs)
        if self.holding:
            self.holding = False
            self.held.set()
            self.release.wait(10)
            return dataclasses.replace(summary, reviewed_today=summary.reviewed_today + 1000)  # long stale
        return summary


async def test_a_cancelled_computation_of_todays_figures_does_not_show_its_stale_figures(ctx):
    write_vault(ctx.paths.vault_dir, broken=False)
    study = SlowFirstToday(ctx)
    app = StudyApp(ctx, study=study)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, TodayScreen)
        study.holding = True
        screen.compute_summary(counts_first=False)  # the older run: it will wait
        while not study.held.is_set():
            await pilot.pause(0.05)
        screen.compute_summary(counts_first=False)  # the newer run cancels it, and finishes first
        await settle(pilot)
        study.release.set()  # the older run ends now
        await pilot.pause(1.0)
        await settle(pilot)
        shown = str(screen.query_one("#reviewed-today").content)
        assert "1000" not in shown, f"Today shows the cancelled run's figure: {shown!r}"
