"""At 80 columns (the minimum size) every key a footer shows fits beside the palette key, and
each screen's main keys are among them; keys moved out of the footer stay in the palette."""

from __future__ import annotations

from studyapp.tui.commands import ScreenActionsProvider, StudyCommandsProvider

from .conftest import app_with_grader, settle
from .sample_vault import write_vault
from .test_tui_drills import StubGrader


def footer_keys(app) -> list[str]:
    """Keys shown in the footer; asserts that none is cut off or hidden under the palette key."""
    shown, palette_x = [], None
    for key in app.screen.query("FooterKey"):
        if key.action == "app.command_palette" or key.key == "ctrl+p":
            palette_x = key.region.x
            continue
        shown.append((key.key, key.region))
    assert palette_x is not None
    for name, region in shown:
        assert region.width > 0 and region.right <= palette_x, (name, region, palette_x)
    return [name for name, _ in shown]


async def test_every_screen_shows_its_main_keys_at_80_columns(ctx):
    write_vault(ctx.paths.vault_dir)
    app = app_with_grader(ctx, StubGrader())
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        assert {"r", "ctrl+q", "t", "d", "n", "S"} <= set(footer_keys(app))
        await pilot.press("r")
        await settle(pilot)
        assert {"space", "u", "f", "e", "escape"} <= set(footer_keys(app))
        await pilot.press("space")
        await settle(pilot)
        assert {"1", "2", "3", "4", "u", "f", "e", "escape"} <= set(footer_keys(app))
        offered = {name for name, _, _ in ScreenActionsProvider(app.screen)._commands()}
        assert {"Suspend", "Drill"} <= offered
        everywhere = {name for name, _, _ in StudyCommandsProvider(app.screen)._commands()}
        assert {"Go to Today", "Go to Notes"} <= everywhere
        await pilot.press("escape")
        await settle(pilot)
        await pilot.press("n")
        await settle(pilot)
        assert {"o", "s", "slash", "t", "d", "S"} <= set(footer_keys(app))
        await pilot.press("d")
        await settle(pilot)
        await pilot.press("enter")
        await settle(pilot)
        assert {"ctrl+r", "ctrl+s", "f4", "escape", "ctrl+q"} <= set(footer_keys(app))


async def test_the_footer_is_rebuilt_only_when_its_keys_change(ctx):
    """A screen switch says "the bindings may have changed" several times for one set of keys:
    the footer keeps its keys until they differ, then shows the new ones."""
    write_vault(ctx.paths.vault_dir)
    app = app_with_grader(ctx, StubGrader())
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press("r")
        await settle(pilot)
        built = list(app.screen.query("FooterKey"))
        app.screen.refresh_bindings()
        app.screen.focus_next()  # a focus change, as a screen switch makes
        await settle(pilot)
        assert list(app.screen.query("FooterKey")) == built
        await pilot.press("space")  # the ratings replace "show answer"
        await settle(pilot)
        assert {"1", "2", "3", "4"} <= set(footer_keys(app))
        assert not set(app.screen.query("FooterKey")) & set(built)
