"""The review screen on a tiny terminal (40 columns by 12 rows): after the answer is revealed,
some of it is on screen. Before, the fixed parts (header, progress, question, the rating
buttons, the footer) took every row and the answer pane was laid out with no height, so
revealing the answer showed nothing of it."""

from __future__ import annotations

import asyncio

import pytest
from tui.conftest import FROZEN_NOW, settle
from tui.sample_vault import write_vault

from studyapp.context import build_context
from studyapp.tui.app import StudyApp
from studyapp.tui.screens.review import ReviewScreen
from studyapp.tui.widgets.answer import Answer


@pytest.fixture(autouse=True)
def _no_early_grader(monkeypatch):
    monkeypatch.setattr(StudyApp, "start_grader_early", False)


@pytest.fixture
def ctx(tmp_path):
    vault = tmp_path / "vault"
    vault.mkdir()
    write_vault(vault)
    return build_context(vault=str(vault), data_dir=str(tmp_path / "data"), now=FROZEN_NOW, seed=False)


async def _revealed(ctx, size: tuple[int, int]) -> dict:
    app = StudyApp(ctx)
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        await pilot.press("r")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, ReviewScreen) and screen.card is not None
        await pilot.press("space")
        await settle(pilot)
        answer = screen.query_one("#answer", Answer)
        ratings = screen.query_one("#ratings")
        shown = [answer.render_line(y).text for y in range(answer.scrollable_content_region.height)]
        return {"revealed": screen.revealed, "height": answer.region.height,
                "content": answer.scrollable_content_region.height, "shown": shown,
                "ratings": ratings.region.height, "screen": app.size.height,
                "bottom": answer.region.bottom}


@pytest.mark.parametrize("size", [(40, 12), (40, 10), (80, 12)])
def test_the_answer_shows_on_a_tiny_terminal(ctx, size):
    seen = asyncio.run(_revealed(ctx, size))
    assert seen["revealed"]
    assert seen["content"] > 0, seen
    assert any(line.strip() for line in seen["shown"]), seen  # some of the answer, not blank rows
    assert seen["bottom"] <= seen["screen"], seen  # on screen, not pushed off its foot


def test_the_answer_keeps_its_room_on_a_normal_terminal(ctx):
    seen = asyncio.run(_revealed(ctx, (100, 30)))
    assert seen["content"] >= 10, seen
    assert seen["ratings"] == 3, seen


async def _shrunk_while_revealed(ctx) -> tuple[int, int]:
    app = StudyApp(ctx)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await pilot.press("r")
        await settle(pilot)
        await pilot.press("space")
        await settle(pilot)
        await pilot.resize_terminal(40, 12)
        await settle(pilot)
        small = app.screen.query_one("#answer", Answer).scrollable_content_region.height
        await pilot.resize_terminal(100, 30)
        await settle(pilot)
        return small, app.screen.query_one("#answer", Answer).scrollable_content_region.height


def test_a_terminal_made_tiny_during_a_review_still_shows_the_answer(ctx):
    small, large = asyncio.run(_shrunk_while_revealed(ctx))
    assert small > 0
    assert large >= 10  # and the full layout comes back with the room
