"""Two writers meeting on one note: the app (driven by Textual's Pilot) or the CLI, and another
real process (the CLI, or a script acting as the user's editor) on the same vault and data dir.
Each test fails on the code it was written against."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from vault_fixtures import new_note, write

from studyapp.context import build_context
from tui.conftest import FROZEN_NOW, app_with_grader, settle, wait_for
from tui.other_editor import THEIRS, drill_app, save_as_other_program
from tui.test_tui_drills import StubGrader

ROOT = Path(__file__).resolve().parents[2]


def _env() -> dict:
    return dict(os.environ, PYTHONPATH=str(ROOT))


# A `studyapp rate` that, once it holds the writer lock and has read the note, says so in a
# file and takes a while to schedule: the window in which another writer meets it.
SLOW_RATE = """
import sys, time
from pathlib import Path
from studyapp import schedule
from studyapp.cli import main

marker = Path(sys.argv.pop(1))
review = schedule.review
def slow_review(*args, **kwargs):
    marker.write_text("holding the writer lock")
    time.sleep(1.5)
    return review(*args, **kwargs)
schedule.review = slow_review
sys.exit(main(sys.argv[1:]))
"""


def _wait_for_file(path: Path, seconds: float = 30) -> None:
    deadline = time.monotonic() + seconds
    while not path.exists():
        assert time.monotonic() < deadline, f"{path} never appeared"
        time.sleep(0.01)


def test_a_note_rated_by_the_cli_while_the_app_waits_for_the_lock_is_not_rated_twice(ctx, tmp_path):
    """The answer of the only note is on screen. `studyapp rate` in another shell rates it: it
    has taken the writer lock and read the note when the learner presses `3`. The app checks
    that the note is still the one it showed (it is: the CLI has not written yet), waits for the
    lock, and then records a second review on top of the CLI's: the note says review_count 2
    and two reviews are in the history. README: "a note rated elsewhere leaves the review
    instead of being rated twice"; the facade's `rate`: a note that changed on disk since it was
    shown is not rated."""
    note = ctx.paths.vault_dir / "a.md"
    write(note, new_note("Why scale attention scores?"))
    marker = tmp_path / "cli-holds-the-lock"
    app = app_with_grader(ctx, StubGrader())

    async def session() -> subprocess.Popen:
        async with app.run_test(size=(100, 30)) as pilot:
            await settle(pilot)
            await pilot.press("r")
            await settle(pilot)
            screen = app.screen
            assert screen.card is not None and screen.card.path == "a.md"
            await pilot.press("space")
            await settle(pilot)
            cli = subprocess.Popen(
                [sys.executable, "-c", SLOW_RATE, str(marker), "rate", "a.md", "--rating", "good",
                 "--vault", str(ctx.paths.vault_dir), "--data-dir", str(ctx.paths.data_dir),
                 "--now", FROZEN_NOW], env=_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
            while not marker.exists():
                assert cli.poll() is None, cli.communicate()
                await pilot.pause(0.02)
            await pilot.press("3")  # the CLI holds the lock and has read the note, not written it
            await settle(pilot)
            cli.communicate(timeout=60)
            await wait_for(pilot, lambda: False, seconds=2)
            return cli

    cli = asyncio.run(session())
    assert cli.returncode == 0
    from studyapp.reviews import ReviewService

    with ReviewService(build_context(vault=str(ctx.paths.vault_dir),
                                     data_dir=str(ctx.paths.data_dir), now=FROZEN_NOW,
                                     seed=False)) as service:
        reviews = len(service.store.reviews())
    text = note.read_text(encoding="utf-8")
    assert "review_count: 1\n" in text and reviews == 1, (
        f"the note was rated twice (once by the CLI, once by the app after it): {reviews} "
        f"reviews, and the note says {[line for line in text.splitlines() if line.startswith('review_count')]}")


def test_leaving_a_drill_does_not_save_over_a_file_another_editor_just_saved(ctx):
    """The learner has typed in the drill's editor (unsaved), and saves the same workspace file
    from their own editor (VS Code beside the app, `studyapp watch` in a terminal). Before the
    once-a-second poll sees that save, they press Esc: leaving saves the app's buffer over the
    file with no question, and the code saved from the other editor is gone, no copy kept.
    The app asks about the reverse case ("saved by another program while you have unsaved edits
    here"); a save that replaces a file changed on disk since it was loaded should ask too (or
    keep the other version)."""
    from textual.widgets import TextArea

    from tui.test_tui_drills import open_sdpa

    app = drill_app(ctx)
    other_editor = "def scaled_dot_product_attention(Q, K, V, mask=None):\n    return Q  # saved in VS Code\n"

    async def session() -> None:
        async with app.run_test(size=(100, 30)) as pilot:
            screen = await open_sdpa(pilot)
            screen.query_one("#code", TextArea).insert("# typed in the app\n")
            await settle(pilot)
            assert screen.unsaved
            save_as_other_program(screen.path, other_editor)
            await pilot.press("escape")  # within the second before the poll notices
            await settle(pilot)

    asyncio.run(session())
    workspace = ctx.paths.workspace_dir / "sdpa.py"
    kept = [p for p in ctx.paths.workspace_dir.rglob("*") if p.is_file()
            and p.read_text(encoding="utf-8", errors="replace") == other_editor]
    assert workspace.read_text(encoding="utf-8") == other_editor or kept, (
        "the code saved from another editor was overwritten by the app's buffer, without a "
        f"question or a copy; the file now holds:\n{workspace.read_text(encoding='utf-8')[:200]}")


def _cli(vault: Path, data: Path, *args: str, now: str = "2026-11-25T09:00") -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "studyapp", *args, "--vault", str(vault), "--data-dir", str(data),
         "--now", now], env=dict(_env(), STUDYAPP_DATA_DIR=str(data)), cwd=ROOT,
        capture_output=True, text=True, timeout=120)


def test_undo_after_a_rename_and_a_new_note_under_the_old_name_reverts_the_moved_note(tmp_path):
    """README: "A note renamed away with a new note written under its old name (`mv b.md
    b-archive.md`, then a new `b.md`) keeps its history with the file that moved; the new note
    starts new." The learner rates b.md, archives it with `mv`, writes a new b.md, and runs
    `studyapp undo`: the undo writes the archived note's old review keys into the NEW b.md
    (its next_review becomes the other note's old date) and leaves the review in
    b-archive.md, while the history says the review was undone. (With a `due` between the
    `mv` and the undo, the undo goes to b-archive.md, exactly.)"""
    vault, data = tmp_path / "vault", tmp_path / "data"
    reviewed = new_note("点积注意力的计算流程").replace("'2026-03-02'", "'2025-10-19'")
    write(vault / "b.md", reviewed)
    done = _cli(vault, data, "rate", "b.md", "--rating", "good")
    assert done.returncode == 0, done.stderr
    after_review = (vault / "b.md").read_bytes()
    os.rename(vault / "b.md", vault / "b-archive.md")
    fresh = new_note("A new note under the old name").replace("'2026-03-02'", "'2026-11-20'")
    write(vault / "b.md", fresh)

    done = _cli(vault, data, "undo", now="2026-11-25T09:05")

    assert (vault / "b.md").read_text(encoding="utf-8") == fresh, (
        f"the undo rewrote the new note under the old name ({done.stdout.strip()}):\n"
        + (vault / "b.md").read_text(encoding="utf-8")[:200])
    assert (vault / "b-archive.md").read_text(encoding="utf-8") == reviewed, (
        "the reviewed (moved) note still holds the review the undo took back"
        if (vault / "b-archive.md").read_bytes() == after_review else "b-archive.md changed")


def test_the_service_refuses_a_note_that_is_not_the_one_shown_and_writes_nothing(ctx):
    """The check the app's rating relies on, made under the writer lock: a note whose bytes are
    not the shown ones, or that was suspended since it was shown, is not rated, and neither the
    file nor the history changes."""
    from studyapp.reviews import NotAsShown, ReviewService
    from studyapp.vault import content_hash

    note = ctx.paths.vault_dir / "a.md"
    write(note, new_note("Why scale attention scores?"))
    shown = content_hash(note.read_bytes())
    with ReviewService(ctx) as service:
        before = note.read_bytes()
        with pytest.raises(NotAsShown) as refused:
            service.record_review("a.md", "good", shown="not-" + shown)
        assert not refused.value.suspended
        assert note.read_bytes() == before and service.store.reviews() == []
        service.set_suspended("a.md", True)
        with pytest.raises(NotAsShown) as refused:
            service.record_review("a.md", "good", shown=shown)
        assert refused.value.suspended
        assert note.read_bytes() == before and service.store.reviews() == []
        service.set_suspended("a.md", False)
        service.record_review("a.md", "good", shown=shown)  # the very note shown: rated
        assert len(service.store.reviews()) == 1 and b"review_count: 1\n" in note.read_bytes()


@pytest.mark.parametrize("key", ["escape", "ctrl+s", "ctrl+r"])
@pytest.mark.parametrize("answer", ["y", "n", "escape"])
def test_a_save_that_meets_another_editors_save_asks_and_does_what_was_answered(ctx, key, answer):
    """Leaving (Esc), saving (ctrl+s) and running (ctrl+r) with unsaved edits, within the
    second before the poll sees another editor's save: the app asks which version stays.
    "Load the saved file" shows the other editor's code and writes nothing; "Keep my edits"
    (or Esc) copies the other editor's version into backups/, writes the app's code and goes on
    (leaves, or says it saved, or grades): neither version is lost."""
    from textual.widgets import TextArea

    from studyapp.tui.screens.confirm import Confirm
    from tui.sample_vault import write_vault
    from tui.test_tui_drills import open_sdpa

    write_vault(ctx.paths.vault_dir)
    grader = StubGrader()
    app = app_with_grader(ctx, grader)
    theirs = THEIRS

    async def session() -> None:
        async with app.run_test(size=(100, 30)) as pilot:
            screen = await open_sdpa(pilot)
            editor = screen.query_one("#code", TextArea)
            editor.insert("# mine\n")
            await settle(pilot)
            mine = editor.text
            # The once-a-second poll would ask first on a loaded machine (its own test covers
            # that path): held off as while a question is up, so the key's save meets the file.
            screen.asking = True
            save_as_other_program(screen.path, theirs)
            await pilot.press(key)
            await settle(pilot)
            assert isinstance(app.screen, Confirm), "saved over another editor's save without asking"
            assert screen.path.read_text(encoding="utf-8") == theirs
            await pilot.press(answer)
            await settle(pilot)
            if answer == "y":  # load theirs: on the drill, showing their code, nothing written
                assert app.screen is screen and editor.text == theirs
                assert screen.path.read_text(encoding="utf-8") == theirs
                return
            assert screen.path.read_text(encoding="utf-8") == mine
            kept = [p.read_text(encoding="utf-8") for p in (screen.path.parent / "backups").glob("sdpa-*.py")]
            assert kept == [theirs], "the other editor's version was not kept"
            if key == "escape":
                assert app.screen is not screen
            else:
                assert app.screen is screen and not screen.unsaved
            if key == "ctrl+r":
                await wait_for(pilot, lambda: bool(grader.graded))

    asyncio.run(session())
