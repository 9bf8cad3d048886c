"""A note open from Notes, renamed and edited outside the app at once (a rename, then a save
before the app saw it): the view kept the old text and said the note "can no longer be read", though the app
had followed the rename. It now shows the note under its new name, as it is now."""

from __future__ import annotations

import pytest

from studyapp.tui.screens.note_view import NoteViewScreen
from studyapp.tui.widgets.answer import Answer

from .conftest import app_with_grader, notified, settle, wait_for
from .test_first_hour import answer_text
from .test_tui_drills import StubGrader

NOTE = """---
created: '2026-10-01'
last_reviewed: null
next_review: '2026-10-01'
review_count: 0
tags: [attention]
---
# Why scale attention scores by sqrt(d_k)

The dot products grow with d_k.
"""


@pytest.mark.parametrize("seen_first", [False, True], ids=["at-once", "rename-seen-first"])
async def test_a_note_open_from_notes_follows_a_rename_and_shows_the_edit(ctx, seen_first):
    old = ctx.paths.vault_dir / "scale.md"
    old.write_text(NOTE, encoding="utf-8")
    app = app_with_grader(ctx, StubGrader())
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await pilot.press("n")
        await settle(pilot)
        await pilot.press("o")
        await settle(pilot)
        view = app.screen
        assert isinstance(view, NoteViewScreen) and "grow with d_k" in answer_text(view.query_one(Answer))
        new = old.with_name("attention-scale.md")
        old.rename(new)
        if seen_first:
            await wait_for(pilot, lambda: "attention-scale.md" in app.study.vault.notes)
        new.write_text(NOTE.replace("grow with d_k.", "grow with d_k, so softmax saturates."),
                       encoding="utf-8")

        await wait_for(pilot, lambda: "softmax saturates" in answer_text(view.query_one(Answer)))

        assert app.screen is view
        assert "softmax saturates" in answer_text(view.query_one(Answer))
        assert not notified(app, "can no longer be read")
