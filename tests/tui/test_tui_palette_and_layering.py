"""Every action is reachable from the command palette; Textual stays inside studyapp/tui/."""

from __future__ import annotations

import re
from pathlib import Path

from studyapp.tui.app import StudyApp
from studyapp.tui.screens.drill import DrillScreen
from studyapp.tui.screens.review import ReviewScreen

from .conftest import real_app, settle
from .sample_vault import write_vault

PACKAGE = Path(__file__).resolve().parents[2] / "studyapp"


def test_textual_is_imported_only_inside_the_tui_package():
    offenders = []
    for path in PACKAGE.rglob("*.py"):
        if "tui" in path.relative_to(PACKAGE).parts:
            continue
        text = path.read_text(encoding="utf-8")
        if re.search(r"^\s*(from|import)\s+textual(_plotext)?\b", text, re.MULTILINE):
            offenders.append(str(path.relative_to(PACKAGE)))
    assert offenders == []


async def test_palette_starts_a_review_and_offers_screen_bindings(ctx):
    write_vault(ctx.paths.vault_dir)
    app = StudyApp(ctx)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await pilot.press("ctrl+p")
        await settle(pilot)
        await pilot.press(*"start review")
        await settle(pilot)
        await pilot.press("enter")
        await settle(pilot)
        assert isinstance(app.screen, ReviewScreen)
        await pilot.press("space")
        await pilot.press("ctrl+p")
        await settle(pilot)
        await pilot.press(*"good")  # the review screen's "3 Good" binding, found by its name
        await settle(pilot)
        await pilot.press("enter")
        await settle(pilot)
        assert app.screen.study.progress().reviewed == 1
        assert "review_count: 4" in (ctx.paths.vault_dir / "注意力/缩放因子.md").read_text(encoding="utf-8")


async def test_paired_drill_is_one_key_away_from_the_review(ctx, shared_grader):
    write_vault(ctx.paths.vault_dir)
    app = real_app(ctx, shared_grader)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await pilot.press("r")
        await settle(pilot)
        card = app.screen.card
        assert card.drills, "the sample note about scaling should pair with a drill"
        await pilot.press("p")
        await settle(pilot)
        assert isinstance(app.screen, DrillScreen) and app.screen.drill_id == card.drills[0]
        await pilot.press("escape")
        await settle(pilot)
        assert isinstance(app.screen, ReviewScreen) and app.screen.card == card


async def test_suspend_from_the_notes_browser(ctx):
    write_vault(ctx.paths.vault_dir)
    app = StudyApp(ctx)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await pilot.press("n")
        await settle(pilot)
        table = app.screen.query_one("#note-table")
        table.focus()
        paths = [row.value for row in table.rows]
        table.move_cursor(row=paths.index("注意力/多头.md"))
        await pilot.press("s")
        await settle(pilot)
        row = next(r for r in app.screen.rows if r.path == "注意力/多头.md")
        assert row.suspended
        assert "suspended" in str(table.get_row("注意力/多头.md")[0])
        await pilot.press("enter")
        await settle(pilot)
        assert app.screen.note_title.startswith("多头注意力")


async def test_theme_comes_from_settings_and_a_bad_name_falls_back(ctx):
    ctx.settings.theme = "nord"
    app = StudyApp(ctx)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        assert app.theme == "nord"
    ctx.settings.theme = "no-such-theme"
    app = StudyApp(ctx)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        assert app.theme == "textual-dark"


async def test_a_theme_picked_in_the_palette_is_saved_to_config(ctx):
    config = ctx.paths.config_file
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_bytes(b"# mine\nnew_per_day = 7\n")
    app = StudyApp(ctx)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        assert config.read_bytes() == b"# mine\nnew_per_day = 7\n"  # starting up writes nothing
        app.action_change_theme()
        await settle(pilot)
        await pilot.press(*"nord", "enter")
        await settle(pilot)
        assert app.theme == "nord"
    assert config.read_bytes() == b'# mine\nnew_per_day = 7\ntheme = "nord"\n'
    assert ctx.settings.theme == "nord"
