"""Keys that arrive together, `/` and a word right behind it (a list filling on a first visit
holds the keys back, then they come at once): the letters after `/` were handled before the
filter's focus landed, so they went to the Notes screen's keys (`s` suspended the selected note,
`o` opened it) or were lost, and the filter read "oft" for "soft". Here the keys are queued at
once, without waiting between them, as a terminal delivers them after a pause."""

from __future__ import annotations

from textual import events
from textual.widgets import Input

from .conftest import app_with_grader, settle
from .test_tui_drills import StubGrader

NOTES = {"softmax.md": "# Softmax\n\nRows sum to one.\n", "scaling.md": "# Scaling\n\nBy sqrt(d_k).\n"}


async def test_letters_queued_behind_the_slash_are_the_filters_text(ctx):
    for path, text in NOTES.items():
        (ctx.paths.vault_dir / path).write_text(text, encoding="utf-8")
    app = app_with_grader(ctx, StubGrader())
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await pilot.press("n")
        await settle(pilot)
        assert type(app.screen).__name__ == "NotesScreen", app.screen
        for key, character in [("slash", "/"), ("s", "s"), ("o", "o"), ("f", "f"), ("t", "t")]:
            event = events.Key(key, character)
            event.set_sender(app)
            app._driver.send_message(event)  # all at once: no wait for the focus to land
        await settle(pilot)
        assert type(app.screen).__name__ == "NotesScreen", f"a letter for the filter left Notes: {app.screen}"
        assert app.screen.query_one("#note-filter", Input).value == "soft"
        logs = list((ctx.paths.vault_dir / ".studyapp" / "log").glob("*.jsonl"))
        assert not any('"suspend"' in log.read_text(encoding="utf-8") for log in logs), "a letter suspended a note"
