"""The app takes in reviews made on another device while it runs (issue 14): a sync tool
copies that device's log file into the vault's log folder, and without a key press the app
replays it, updates the card and the note's owned keys, and says so."""

from __future__ import annotations

import shutil
import time

from studyapp.context import build_context
from studyapp.reviews import ReviewService
from studyapp.tui.app import StudyApp

from .conftest import FROZEN_NOW, settle
from .sample_vault import write_vault

SCALING = "注意力/缩放因子.md"


def _owned(path) -> str:
    """The note's review keys as written (both devices must agree on them)."""
    keys = ("last_reviewed:", "next_review:", "review_count:")
    return "\n".join(line for line in path.read_text(encoding="utf-8").splitlines() if line.startswith(keys))


def _review_count(app) -> int:
    return app.study.service.store.review_count()


async def test_reviews_from_another_device_are_taken_in_while_the_app_runs(ctx, tmp_path):
    write_vault(ctx.paths.vault_dir)
    other_vault = tmp_path / "laptop" / "vault"
    shutil.copytree(ctx.paths.vault_dir, other_vault)
    laptop = build_context(vault=str(other_vault), data_dir=str(tmp_path / "laptop" / "data"),
                           now=FROZEN_NOW, seed=False)
    app = StudyApp(ctx)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        assert _review_count(app) == 0
        with ReviewService(laptop) as service:  # the laptop reviews the note...
            service.record_review(SCALING, "good")
            laptop_log = service.history_log.own_file
        target = ctx.paths.vault_dir / ".studyapp" / "log"
        target.mkdir(parents=True, exist_ok=True)
        shutil.copy2(laptop_log, target / laptop_log.name)  # ...and the sync tool copies its log
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and _review_count(app) == 0:
            await pilot.pause(0.1)
        await settle(pilot)
        assert _review_count(app) == 1
        assert _owned(ctx.paths.vault_dir / SCALING) == _owned(other_vault / SCALING)
        assert "review_count: 4" in _owned(ctx.paths.vault_dir / SCALING)  # 3 before, + the laptop's
        assert any("another device" in n.message for n in app._notifications)


async def test_the_apps_own_reviews_do_not_count_as_another_devices(ctx):
    write_vault(ctx.paths.vault_dir)
    app = StudyApp(ctx)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await pilot.press("r")
        await settle(pilot)
        await pilot.press("space", "3")
        await settle(pilot)
        app.take_other_devices_reviews()  # the watcher's job on the log's change, run now rather than waited for
        await settle(pilot)
        assert _review_count(app) == 1
        assert not any("another device" in n.message for n in app._notifications)
