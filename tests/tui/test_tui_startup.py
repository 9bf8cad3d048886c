"""Start-up: Today's figures come from the metadata cache before the vault is loaded, and the
grader's worker is started in the background once the app is up (issues 15 and 17)."""

from __future__ import annotations

import os
import threading
import time

from studyapp.facade import StudyFacade
from studyapp.grader.contract import GradeLimits
from studyapp.tui.app import StudyApp

from .conftest import settle
from .sample_vault import write_vault

AN_HOUR_AGO_NS = time.time_ns() - 3600 * 10**9


def write_cached_vault(ctx) -> tuple[int, int, int, int]:
    """A vault whose files are old enough to be cached, loaded once so the cache is warm;
    returns the figures the real load gives (new, learning, review, problems)."""
    root = write_vault(ctx.paths.vault_dir)
    for path in root.rglob("*.md"):
        os.utime(path, ns=(AN_HOUR_AGO_NS, AN_HOUR_AGO_NS))
    facade = StudyFacade(ctx)
    try:
        facade.load()
        counts = facade.today_counts()
    finally:
        facade.close()
    return counts.new, counts.learning, counts.review, counts.problems


class SlowLoad(StudyFacade):
    """The real facade whose vault load waits until the test lets it go."""

    def __init__(self, ctx, **kwargs) -> None:
        super().__init__(ctx, **kwargs)
        self.go = threading.Event()

    def load(self):
        assert self.go.wait(30)
        return super().load()


def figure_text(app, figure_id: str) -> str:
    return str(app.screen.query_one(f"#{figure_id}").render())


def test_cached_counts_match_the_loaded_figures(ctx):
    new, learning, review, problems = write_cached_vault(ctx)
    facade = StudyFacade(ctx)
    try:
        cached = facade.cached_counts()
        assert cached is not None
        assert (cached.new, cached.learning, cached.review, cached.problems) == (new, learning, review, problems)
        facade.load()
        assert facade.cached_counts() is None  # loaded: the real figures are as cheap
    finally:
        facade.close()


def test_no_cache_means_no_preview(ctx):
    write_vault(ctx.paths.vault_dir)
    facade = StudyFacade(ctx)
    try:
        assert facade.cached_counts() is None
    finally:
        facade.close()


async def test_today_shows_cached_figures_before_the_load_finishes(ctx):
    new, learning, review, _problems = write_cached_vault(ctx)
    study = SlowLoad(ctx)
    app = StudyApp(ctx, study=study)
    async with app.run_test(size=(100, 30)) as pilot:
        for _ in range(200):
            await pilot.pause(0.02)
            if figure_text(app, "due-counts") != "…":
                break
        assert not app.study_ready, "the load was still held back"
        shown = figure_text(app, "due-counts")
        assert [int(n) for n in shown.replace("·", " ").split()] == [new, learning, review]
        assert "checking the vault" in figure_text(app, "today-hint")

        study.go.set()
        await settle(pilot)
        assert app.study_ready
        assert "checking the vault" not in figure_text(app, "today-hint")
        assert [int(n) for n in figure_text(app, "due-counts").replace("·", " ").split()] == [new, learning, review]


class FakeGrader:
    """Records how the facade built and drove it; grades nothing."""

    built: list[FakeGrader] = []

    def __init__(self, limits) -> None:
        self.timeout, self.memory_mb = limits.timeout, limits.memory_mb
        self.started_on: list[str] = []
        self.graded = 0
        self.closed = False
        FakeGrader.built.append(self)

    def start(self) -> None:
        self.started_on.append(threading.current_thread().name)

    def grade(self, drill_id, path, device="auto", limits=None, seed=None) -> dict:
        self.graded += 1
        return {"status": "pass", "summary": "", "hint": "", "checks": []}

    def cancel(self) -> None:
        pass

    def close(self) -> None:
        self.closed = True


async def test_grader_starts_in_the_background_once_the_app_is_up(ctx, monkeypatch):
    monkeypatch.setattr(StudyApp, "start_grader_early", True)
    FakeGrader.built = []
    ctx.settings.grader_timeout = 7.5
    ctx.settings.grader_memory_mb = 1234
    write_vault(ctx.paths.vault_dir)
    monkeypatch.setattr("studyapp.grader.client.GraderClient", FakeGrader)  # built by `drills`
    study = StudyFacade(ctx)
    app = StudyApp(ctx, study=study)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        assert len(FakeGrader.built) == 1
        grader = FakeGrader.built[0]
        assert (grader.timeout, grader.memory_mb) == (7.5, 1234)
        assert len(grader.started_on) == 1
        assert grader.started_on[0] != threading.main_thread().name, "started in a worker thread"
        # the first grade uses the worker already started
        study.grade("sdpa", ctx.paths.workspace_dir / "sdpa.py")
        assert grader.graded == 1 and len(FakeGrader.built) == 1
    assert grader.closed, "the worker is stopped when the app exits"


async def test_grader_start_waits_for_the_first_frame_and_today(ctx, monkeypatch):
    monkeypatch.setattr(StudyApp, "start_grader_early", True)
    FakeGrader.built = []
    write_vault(ctx.paths.vault_dir)
    painted = threading.Event()
    original = StudyApp._display

    def display(self, screen, renderable):
        if renderable is not None:
            painted.set()
        return original(self, screen, renderable)

    monkeypatch.setattr(StudyApp, "_display", display)
    seen: list[tuple[bool, str]] = []

    class Recording(FakeGrader):
        def start(self) -> None:
            today_drills = str(app.screen.query_one("#today-drills").render())
            seen.append((painted.is_set(), today_drills))
            super().start()

    app = StudyApp(ctx, study=StudyFacade(ctx, make_grader=lambda _ctx: Recording(GradeLimits(timeout=1, memory_mb=1))))
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
    assert len(seen) == 1
    first_frame_drawn, today_drills = seen[0]
    assert first_frame_drawn
    assert today_drills != "…", "Today was drawn in full before torch began importing elsewhere"


def test_a_closed_session_starts_no_grader(ctx):
    FakeGrader.built = []
    facade = StudyFacade(ctx, make_grader=lambda _ctx: FakeGrader(timeout=1, memory_mb=1))
    facade.close()
    facade.start_grader()
    assert FakeGrader.built == []


def test_an_unreadable_cache_means_no_preview(ctx):
    write_cached_vault(ctx)
    ctx.paths.cache_file.write_bytes(b"not a database")
    facade = StudyFacade(ctx)
    try:
        assert facade.cached_counts() is None
        assert facade.load()[0] > 0  # the load still reads every note
    finally:
        facade.close()
