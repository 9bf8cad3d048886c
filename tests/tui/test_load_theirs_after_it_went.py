"""The drill's "load the saved file" answer when that file was deleted or saved unreadable
while the question was up: said, the code in the editor kept, no crash."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from textual.widgets import TextArea

from studyapp.tui.screens.confirm import Confirm
from tui.conftest import settle
from tui.other_editor import THEIRS, drill_app, save_as_other_program
from tui.test_tui_drills import open_sdpa

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("then", ["deleted", "latin1"])
def test_loading_their_version_after_it_became_unreadable_is_no_crash(ctx, then):
    """Unsaved edits in the app; another program saves the file: the app asks which version
    stays. While the question is up the file is removed (or re-saved as Latin-1); the learner
    answers "Load the saved file": the app must say it cannot, not crash with a traceback."""
    app = drill_app(ctx)
    theirs = THEIRS
    seen: dict = {}

    async def session() -> None:
        async with app.run_test(size=(100, 30)) as pilot:
            screen = await open_sdpa(pilot)
            editor = screen.query_one("#code", TextArea)
            editor.insert("# mine\n")
            await settle(pilot)
            mine = editor.text
            seen["mine"] = mine
            save_as_other_program(screen.path, theirs)
            await pilot.press("ctrl+s")
            await settle(pilot)
            assert isinstance(app.screen, Confirm)
            if then == "deleted":
                screen.path.unlink()
            else:
                screen.path.write_bytes("# caf\xe9\n".encode("latin-1"))
            await pilot.press("y")
            await settle(pilot)
            seen["alive"] = app.is_running
            seen["text"] = editor.text

    try:
        asyncio.run(session())
    except Exception as exc:  # noqa: BLE001 - the app's crash, re-raised by run_test
        seen["crash"] = repr(exc)
    assert "crash" not in seen and seen.get("alive"), (
        f"the app crashed on \"Load the saved file\" after the file was {then}: {seen.get('crash')}")
    assert seen["text"] == seen["mine"], "the learner's unsaved code left the editor"

