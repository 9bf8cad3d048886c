"""Defects found by a learner's 20-minute session while another shell renamed, swapped, rated
and undid the notes under it. Each test fails on the code it was written against."""

from __future__ import annotations

import os

from .conftest import app_with_grader, settle, wait_for
from .test_tui_drills import StubGrader

NOTE = """---
created: '2026-10-01'
last_reviewed: {last}
next_review: '{due}'
review_count: {count}
difficulty: medium
mastery_level: 0.0
tags:
- numerics
related_outlines: []
---
# {title}

## answer

{answer}
"""


def _vault(root):
    folder = root / "numerics"
    folder.mkdir(parents=True)
    (folder / "a.md").write_text(NOTE.format(last="'2026-11-10'", due="2026-11-16", count=2,
                                             title="Why subtract the max in softmax?",
                                             answer="exp overflows; the shift cancels."))
    (folder / "b.md").write_text(NOTE.format(last="null", due="2026-10-01", count=0,
                                             title="What is log-sum-exp?",
                                             answer="log of a sum of exps, computed stably."))
    return folder


async def test_a_swap_under_the_shown_answer_does_not_rate_the_other_note(ctx):
    """The answer of A is on screen; a sync swaps two files (A's bytes now in b.md, B's in a.md).
    The screen switches to B with B's answer already revealed, no question step and no notice,
    and the `3` meant for A is recorded on B: B (never seen) is rated Good, A is not rated."""
    folder = _vault(ctx.paths.vault_dir)
    app = app_with_grader(ctx, StubGrader())
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await pilot.press("r")
        await settle(pilot)
        screen = app.screen
        assert screen.card.title == "Why subtract the max in softmax?"
        await pilot.press("space")
        await settle(pilot)
        os.rename(folder / "a.md", folder / "tmp.md")
        os.rename(folder / "b.md", folder / "a.md")
        os.rename(folder / "tmp.md", folder / "b.md")
        await wait_for(pilot, lambda: screen.card is None or screen.card.title != "Why subtract the max in softmax?"
                    or screen.card.path != "numerics/a.md")
        await pilot.press("3")
        await settle(pilot)
    a_text = (folder / "b.md").read_text()  # A's bytes
    b_text = (folder / "a.md").read_text()  # B's bytes
    assert "review_count: 0" in b_text, "the note never shown was rated"
    assert "review_count: 3" in a_text, "the note whose answer was shown was not rated"


async def test_a_rating_just_after_a_rename_follows_the_note(ctx):
    """Obsidian renames the note whose answer is shown and the learner presses `3` before the
    watcher saw it: "changed outside the app and can no longer be read; it leaves this session",
    nothing is rated, and the note never comes back although `due` lists it at its new path."""
    folder = _vault(ctx.paths.vault_dir)
    app = app_with_grader(ctx, StubGrader())
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await pilot.press("r")
        await settle(pilot)
        await pilot.press("space")
        await settle(pilot)
        os.rename(folder / "a.md", folder / "a-renamed.md")
        await pilot.press("3")
        await settle(pilot)
        await pilot.pause(1.5)
        await settle(pilot)
        p = app.study.progress()
        left = p.new + p.learning + p.review
    text = (folder / "a-renamed.md").read_text()
    assert "review_count: 3" in text or left == 2, "the renamed note was neither rated nor kept"


async def test_another_note_written_over_the_shown_one_is_not_rated_unseen(ctx):
    """The answer of A is on screen; another note's text is written over A's file (a sync
    tool's conflict copy put in its place: same path, another title, a new mtime, so no rename
    to follow). The screen showed the other note with its answer revealed, and `3` rated it."""
    folder = _vault(ctx.paths.vault_dir)
    app = app_with_grader(ctx, StubGrader())
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await pilot.press("r")
        await settle(pilot)
        screen = app.screen
        await pilot.press("space")
        await settle(pilot)
        other = NOTE.format(last="null", due="2026-10-01", count=0, title="What is a conflict copy?",
                            answer="another note")
        (folder / "a.md").write_text(other)
        await wait_for(pilot, lambda: screen.card is not None and screen.card.title == "What is a conflict copy?")
        assert not screen.revealed, "another note's answer shown as if its question had been seen"
        await pilot.press("3")
        await settle(pilot)
    assert (folder / "a.md").read_text() == other, "a note whose question was never shown was rated"


async def test_the_shown_note_rated_and_undone_elsewhere_comes_back(ctx):
    """The note on screen is rated with `studyapp rate` in another shell (it leaves the session,
    so it is not rated twice), then that rating is taken back with `studyapp undo`: the note
    is due again, but it never came back into the session, which stayed one short of `due`."""
    import subprocess
    import sys

    _vault(ctx.paths.vault_dir)
    app = app_with_grader(ctx, StubGrader())
    shell = [sys.executable, "-m", "studyapp", "--vault", str(ctx.paths.vault_dir),
             "--data-dir", str(ctx.paths.data_dir), "--now", ctx.now().isoformat()]
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await pilot.press("r")
        await settle(pilot)
        screen = app.screen
        shown = screen.card.path
        before = app.study.progress()
        subprocess.run([*shell, "rate", shown, "--rating", "good"], check=True, capture_output=True)
        await wait_for(pilot, lambda: screen.card is None or screen.card.path != shown)
        subprocess.run([*shell, "undo"], check=True, capture_output=True)
        await wait_for(pilot, lambda: screen.card is not None and screen.card.path == shown
                    or shown in app.study.session.order)
        after = app.study.progress()
        assert shown in app.study.session.order, "the note undone elsewhere did not come back"
        assert (after.new, after.learning, after.review) == (before.new, before.learning, before.review)
