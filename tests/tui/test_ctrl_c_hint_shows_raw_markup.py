"""Found in tmux: a learner presses ctrl+c (the reflex to quit a terminal program) on Today. Textual
answers with a notification meant to read "Press **ctrl+q** to quit the app", written in markup
(`App.action_help_quit`). The app's `notify` turns markup off for every notification (titles and
paths are shown as text), so the learner reads the tags themselves:

    Do you want to quit?
    Press [b]ctrl+q[/b] to quit the app

The hint that should tell the learner how to quit shows markup tags as text."""

from __future__ import annotations

from studyapp.tui.app import StudyApp

from .conftest import settle
from .sample_vault import write_vault


async def test_ctrl_c_says_how_to_quit_without_markup_tags(ctx):
    write_vault(ctx.paths.vault_dir, broken=False)
    app = StudyApp(ctx)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await pilot.press("ctrl+c")
        await settle(pilot)
        hints = [n for n in app._notifications if "ctrl+q" in n.message]
        assert hints, "ctrl+c said nothing about ctrl+q"
        # a notification is drawn as text when its markup is off (the app turns it off for all):
        # what the learner reads is then its message, character for character
        shown = [n.message if not n.markup else n.message.replace("[b]", "").replace("[/b]", "")
                 for n in hints]
        assert not any("[b]" in text or "[/b]" in text for text in shown), (
            f"the quit hint shows its markup tags as text: {shown}")
