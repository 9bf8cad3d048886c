"""The daily loop between screens (issue 10): keys go where the learner's attention is, one
screen per purpose, nothing unsaved is lost, the vault is watched, the verdict stays readable.

Every test runs the real facade, vault and database; only the grader is a stub.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest
from textual.widgets import DataTable, Static, TextArea

from studyapp.reviews import ReviewService
from studyapp.tui.app import StudyApp
from studyapp.tui.screens.drill import DrillScreen
from studyapp.tui.screens.review import ReviewScreen
from studyapp.tui.screens.today import TodayScreen

from .conftest import app_with_grader, notified, real_app, settle
from .sample_vault import write_vault
from .test_tui_drills import StubGrader

SCALING = "注意力/缩放因子.md"
NO_SCALING_VERDICT = json.loads(
    (Path(__file__).with_name("verdict_sdpa_no_scaling.json")).read_text(encoding="utf-8"))
"""A verdict the real grader gave for an SDPA that forgets to divide by sqrt(d_k)."""


class VerdictGrader(StubGrader):
    """Answers every grade with one fixed verdict."""

    def __init__(self, verdict: dict) -> None:
        super().__init__()
        self.verdict = verdict

    def grade(self, drill_id, path, device="auto", timeout=None):
        self.graded.append((drill_id, open(path, encoding="utf-8").read()))
        return dict(self.verdict, drill=drill_id, file=str(path))


@pytest.fixture
def grader():
    return StubGrader()


@pytest.fixture
def app(ctx, grader):
    return loop_app(ctx, grader)


def loop_app(ctx, grader) -> StudyApp:
    write_vault(ctx.paths.vault_dir)
    return app_with_grader(ctx, grader)


def review_count(app) -> int:
    return app.study.service.store.conn.execute("SELECT COUNT(*) FROM reviews").fetchone()[0]


def attempts(app, drill_id: str) -> int:
    return len(app.study.service.store.drill_attempts(drill_id))


def note_paths(app) -> list[str]:
    return [row.path for row in app.study.notes()[0]]


def suspended(app, path: str) -> bool:
    store = app.study.service.store
    row = store.note_by_path(path)
    card = store.card(row.key) if row is not None else None
    return bool(card and card.suspended)


def all_screens(app) -> list:
    return [screen for stack in app._screen_stacks.values() for screen in stack]


async def rate_first_then_practise(pilot) -> tuple[str, str]:
    """r, space, 3 on the first note, then p on the next one: (rated path, practised drill)."""
    await settle(pilot)
    await pilot.press("r")
    await settle(pilot)
    rated = pilot.app.screen.card.path
    await pilot.press("space", "3")
    await settle(pilot)
    card = pilot.app.screen.card
    assert card is not None and card.drills, "the second note of the sample vault pairs with a drill"
    await pilot.press("p")
    return rated, card.drills[0]


# -- item 1: keys go where the learner's attention is -----------------------------------------



async def open_drill(pilot, drill_id: str = "sdpa") -> None:
    """Let the app load, open a drill the way `p` and Enter do, and wait until it is up."""
    await settle(pilot)
    pilot.app.action_open_drill(drill_id)
    await settle(pilot)

async def test_typing_in_a_drill_opened_from_review_goes_into_the_editor(app):
    async with app.run_test(size=(100, 30)) as pilot:
        rated, drill = await rate_first_then_practise(pilot)
        await pilot.press(*"nrus")  # typed straight away, as a learner does
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, DrillScreen) and screen.drill_id == drill
        editor = screen.query_one("#code", TextArea)
        assert app.focused is editor
        assert "nrus" in editor.text
        assert review_count(app) == 1  # `u` did not undo the rating
        assert not suspended(app, rated) and not any(suspended(app, p) for p in note_paths(app))
        assert not any(isinstance(s, ReviewScreen) for s in app.screen_stack[:-2])  # `r` started nothing


async def test_a_drill_opened_from_the_list_focuses_its_editor(app):
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await pilot.press("d")
        await settle(pilot)
        await pilot.press("enter")
        await pilot.press(*"ts")
        await settle(pilot)
        assert isinstance(app.screen, DrillScreen)
        assert app.focused is app.screen.query_one("#code", TextArea)
        assert "ts" in app.focused.text


async def test_an_input_keeps_single_keys_from_the_screen(app):
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await pilot.press("n")
        await settle(pilot)
        await pilot.press("slash", *"srdS")
        await settle(pilot)
        assert app.current_mode == "notes"
        assert app.screen.query_one("#note-filter").value == "srdS"
        assert not any(suspended(app, p) for p in note_paths(app))


async def test_tab_indents_and_f6_moves_between_editor_and_results(ctx):
    app = loop_app(ctx, VerdictGrader(NO_SCALING_VERDICT))
    async with app.run_test(size=(80, 24)) as pilot:
        await open_drill(pilot)
        screen = app.screen
        editor = screen.query_one("#code", TextArea)
        editor.move_cursor((editor.document.line_count - 1, 0))
        await pilot.press("tab", "x")
        assert editor.text.splitlines()[-1].startswith("    x")
        await pilot.press("ctrl+r")
        await settle(pilot)
        results = screen.query_one("#result-box")
        await pilot.press("f6")
        assert app.focused is results
        assert results.max_scroll_y > 0, "the long verdict does not fit at 80x24: it must scroll"
        await pilot.press("pagedown")
        await settle(pilot)
        assert results.scroll_y > 0
        await pilot.press("ctrl+o", "ctrl+o")  # on to the task, and back
        assert app.focused is editor


async def test_undo_and_suspend_from_one_key_say_what_they_did(app):
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await pilot.press("r")
        await settle(pilot)
        title = app.screen.card.title
        await pilot.press("space", "3", "u")
        await settle(pilot)
        assert notified(app, f"Undid the rating of “{title}”")
        await pilot.press("s")
        await settle(pilot)
        assert notified(app, f"Suspended “{title}”")
        assert suspended(app, SCALING)


# -- item 2: one screen per purpose ------------------------------------------------------------


async def test_switching_screens_never_leaves_a_drill_grading_underneath(app, ctx, grader):
    stub = grader
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await pilot.press("r")
        await settle(pilot)
        await pilot.press("p")  # the first note pairs with sdpa
        await settle(pilot)
        await pilot.press("escape")  # back to the review
        await settle(pilot)
        await pilot.press("p")
        await settle(pilot)
        assert isinstance(app.screen, DrillScreen)
        await pilot.press("f6", "d")  # out of the editor, a mode key
        await settle(pilot)
        table = app.screen.query_one("#drill-table", DataTable)
        table.move_cursor(row=table.get_row_index("sdpa"))
        await pilot.press("enter")
        await settle(pilot)
        drills = [s for s in all_screens(app) if isinstance(s, DrillScreen)]
        assert drills == [app.screen]
        assert not any(isinstance(s, ReviewScreen) for s in all_screens(app))
        await pilot.press(*"# mine", "ctrl+s")
        await settle(pilot)
        app.screen._poll_file()  # the outside-save watcher's 1 s timer job, called instead of waited for
        await settle(pilot)
        assert stub.graded == [] and attempts(app, "sdpa") == 0
        await pilot.press("ctrl+r")
        await settle(pilot)
        app.screen._poll_file()
        await settle(pilot)
        assert attempts(app, "sdpa") == 1
        await pilot.press("f6", "t")
        await settle(pilot)
        assert [type(s) for s in app.screen_stack] == [TodayScreen]
        assert not any(isinstance(s, DrillScreen) for s in all_screens(app))
        await pilot.press("r")
        await settle(pilot)
        await pilot.press("escape")
        await settle(pilot)
        assert isinstance(app.screen, TodayScreen)


async def test_a_drill_covered_by_another_screen_does_not_grade_an_outside_save(app, grader):
    stub = grader
    async with app.run_test(size=(100, 30)) as pilot:
        await open_drill(pilot)
        drill = app.screen
        await pilot.press("ctrl+p")
        await settle(pilot)
        time.sleep(0.01)
        drill.path.write_text("# saved elsewhere\n", encoding="utf-8")
        drill._poll_file()
        await settle(pilot)
        assert stub.graded == []
        await pilot.press("escape")
        await settle(pilot)
        drill._poll_file()
        await settle(pilot)
        assert stub.graded == [("sdpa", "# saved elsewhere\n")]


# -- item 4: leaving with unsaved changes saves or asks ----------------------------------------


async def test_ctrl_q_in_the_drill_editor_saves_the_code(app, ctx):
    async with app.run_test(size=(100, 30)) as pilot:
        await open_drill(pilot)
        await pilot.press(*"# unsaved", "ctrl+q")
        await settle(pilot)
    assert "# unsaved" in (ctx.paths.workspace_dir / "sdpa.py").read_text(encoding="utf-8")


async def test_a_mode_key_from_the_drill_saves_the_code(app, ctx):
    async with app.run_test(size=(100, 30)) as pilot:
        await open_drill(pilot)
        await pilot.press(*"# unsaved", "f6", "n")
        await settle(pilot)
        assert app.current_mode == "notes"
        assert "# unsaved" in (ctx.paths.workspace_dir / "sdpa.py").read_text(encoding="utf-8")


async def test_leaving_when_the_save_fails_asks_first(app, ctx, monkeypatch):
    async with app.run_test(size=(100, 30)) as pilot:
        await open_drill(pilot)
        drill = app.screen

        def refuse(path, text):
            raise OSError("disk full")

        monkeypatch.setattr(app.study, "save_drill_file", refuse)
        await pilot.press(*"# unsaved", "ctrl+q")
        await settle(pilot)
        assert app.is_running and app.screen is not drill  # a question, over the drill
        await pilot.press("escape")  # stay
        await settle(pilot)
        assert app.screen is drill and "# unsaved" in drill.query_one("#code", TextArea).text


async def test_an_outside_save_over_unsaved_edits_asks_which_to_keep(app, grader):
    from studyapp.tui.screens.confirm import Confirm

    stub = grader
    async with app.run_test(size=(100, 30)) as pilot:
        await open_drill(pilot)
        drill = app.screen
        await pilot.press(*"# mine")
        time.sleep(0.01)
        drill.path.write_text("# theirs\n", encoding="utf-8")
        drill._poll_file()
        await settle(pilot)
        assert isinstance(app.screen, Confirm)
        await pilot.press("n")  # keep my edits
        await settle(pilot)
        assert app.screen is drill and "# mine" in drill.query_one("#code", TextArea).text
        assert stub.graded == []
        await pilot.press("ctrl+s")
        assert "# mine" in drill.path.read_text(encoding="utf-8")


# -- item 7: the vault is watched --------------------------------------------------------------


async def test_a_note_rated_elsewhere_is_not_rated_twice(app, ctx):
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await pilot.press("r")
        await settle(pilot)
        assert app.screen.card.path == SCALING
        with ReviewService(ctx) as cli:  # what `studyapp rate` does, in another process
            cli.record_review(SCALING, "good")
        await pilot.press("space", "3")
        await settle(pilot)
        assert review_count(app) == 1
        assert notified(app, "changed outside")
        assert app.screen.card is None or app.screen.card.path != SCALING


async def test_a_new_note_rated_elsewhere_leaves_though_its_learning_step_is_due_soon(app, ctx):
    """Rated "good" by `studyapp rate`, a new note is due again in 10 minutes, inside the
    session's learn-ahead: it still leaves the screen (with a word), and is not rated twice."""
    for rel in (SCALING, "基础/cls.md", "基础/坏掉的.md"):
        (ctx.paths.vault_dir / rel).unlink()
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await pilot.press("r")
        await settle(pilot)
        screen = app.screen
        shown = screen.card.path
        await pilot.press("space")
        with ReviewService(ctx) as cli:  # what `studyapp rate` does, in another process
            cli.record_review(shown, "good")
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and not notified(app, "changed outside"):
            await pilot.pause(0.1)  # the vault watcher sees the note's new review keys
        await settle(pilot)
        assert notified(app, "changed outside")
        assert screen.card is None or screen.card.path != shown
        await pilot.press("space", "3")
        await settle(pilot)
        assert "review_count: 1" in (ctx.paths.vault_dir / shown).read_text(encoding="utf-8")  # not 2


async def test_an_outside_edit_is_shown_without_a_key(app, ctx):
    path = ctx.paths.vault_dir / SCALING
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await pilot.press("r")
        await settle(pilot)
        screen = app.screen
        assert screen.card.path == SCALING
        path.write_text(path.read_text(encoding="utf-8").replace("为什么注意力", "为何注意力"), encoding="utf-8")
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and not screen.card.title.startswith("为何"):
            await pilot.pause(0.1)
        assert screen.card.title.startswith("为何")
        assert "为何注意力" in str(screen.query_one("#question", Static).render())
        watcher = app._watcher
        assert watcher is not None and watcher.is_alive()
    assert not watcher.is_alive(), "the vault watcher stops with the app"


async def test_a_note_deleted_outside_leaves_the_review_queue(app, ctx):
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await pilot.press("r")
        await settle(pilot)
        screen = app.screen
        remaining = app.study.progress().remaining
        (ctx.paths.vault_dir / SCALING).unlink()
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and screen.card is not None and screen.card.path == SCALING:
            await pilot.pause(0.1)
        assert screen.card is None or screen.card.path != SCALING
        assert app.study.progress().remaining == remaining - 1


# -- item 9: layout ----------------------------------------------------------------------------


def visible(widget, within) -> bool:
    """Whether the widget's first line lies inside `within`'s visible region on screen."""
    region, box = widget.region, within.region
    return region.height > 0 and box.y <= region.y < box.bottom and region.x < box.right


async def test_the_verdict_key_line_and_hint_show_at_120x36(ctx):
    app = loop_app(ctx, VerdictGrader(NO_SCALING_VERDICT))
    async with app.run_test(size=(120, 36)) as pilot:
        await open_drill(pilot)
        await pilot.press("ctrl+r")
        await settle(pilot)
        screen = app.screen
        results = screen.query_one("#result-box")
        summary = screen.query_one("#verdict-summary", Static)
        hint = screen.query_one("#hint", Static)
        assert "looks like" in str(summary.render()).lower()
        assert visible(summary, results) and visible(hint, results)
        lines = summary.region.height
        assert lines >= 2, "the summary wraps instead of being cut at the pane's edge"


async def test_at_80x24_the_editor_shows_code_not_just_the_docstring(ctx):
    app = loop_app(ctx, VerdictGrader(NO_SCALING_VERDICT))
    async with app.run_test(size=(80, 24)) as pilot:
        await open_drill(pilot)
        editor = app.screen.query_one("#code", TextArea)
        lines = editor.text.splitlines()
        def_line = next(i for i, line in enumerate(lines) if line.startswith("def "))

        def shown() -> range:
            top = round(editor.scroll_y)
            return range(top, top + editor.scrollable_content_region.height)

        assert def_line in shown() and def_line + 1 in shown()
        await pilot.press("ctrl+r")  # the results take room from the editor
        await settle(pilot)
        assert def_line + 1 in shown() and editor.cursor_location[0] in shown()


async def test_the_line_being_edited_stays_in_view_whatever_shrinks_the_editor(ctx):
    """The results pane opening takes room from the editor: the cursor's line stays in view
    even when nothing scrolls after the run (under load, a scroll queued by the run could land
    before the editor shrank)."""
    app = loop_app(ctx, VerdictGrader(NO_SCALING_VERDICT))
    async with app.run_test(size=(80, 24)) as pilot:
        await open_drill(pilot)
        editor = app.screen.query_one("#code", TextArea)
        editor.move_cursor((len(editor.text.splitlines()) - 1, 0))
        editor.scroll_cursor_visible(animate=False)
        await settle(pilot)
        app.screen.query_one("#result-box").display = True
        await settle(pilot)
        top = round(editor.scroll_y)
        assert editor.cursor_location[0] in range(top, top + editor.scrollable_content_region.height)


async def test_reopening_a_drill_shows_its_last_verdict(ctx):
    app = loop_app(ctx, VerdictGrader(NO_SCALING_VERDICT))
    async with app.run_test(size=(100, 30)) as pilot:
        await open_drill(pilot)
        await pilot.press("ctrl+r")
        await settle(pilot)
        await pilot.press("escape")
        await open_drill(pilot)
        status = str(app.screen.query_one("#verdict-summary", Static).render())
        assert "FAIL" in status and "looks like" in status.lower()


async def test_after_a_restart_a_drill_shows_its_last_result(ctx, shared_grader):
    app = loop_app(ctx, VerdictGrader(NO_SCALING_VERDICT))
    async with app.run_test(size=(100, 30)) as pilot:
        await open_drill(pilot)
        # the learner's code (a failing untouched starter is no run of theirs: not recorded)
        app.screen.query_one("#code", TextArea).text = "def sdpa(q, k, v, mask=None):\n    return q\n"
        await pilot.press("ctrl+r")
        await settle(pilot)
    again = real_app(ctx, shared_grader)
    async with again.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        again.action_open_drill("sdpa")
        await settle(pilot)
        status = str(again.screen.query_one("#verdict-summary", Static).render())
        assert "FAIL" in status and "last run 2026-11-22" in status and "looks like" in status.lower()


async def test_the_palette_lists_no_command_twice(app):
    from textual.command import CommandPalette

    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        for keys in ((), ("r",), ("space",), ("escape", "d"), ("n",)):
            await pilot.press(*keys)
            await settle(pilot)
            await pilot.press("ctrl+p")
            await settle(pilot)
            palette = app.screen
            assert isinstance(palette, CommandPalette)
            names = [str(option.prompt).split("\n")[0] for option in palette.query_one("CommandList")._options]
            assert names and len(names) == len(set(names)), sorted(names)
            await pilot.press("escape")
            await settle(pilot)


@pytest.mark.parametrize("width", [80, 100])
async def test_a_question_shows_both_answers_whole(width):
    """At 100 columns "Load the saved file, drop my edits (y)" was cut off: each answer is
    drawn whole inside the dialog."""
    from textual.app import App
    from textual.widgets import Button

    from studyapp.tui.screens.confirm import Confirm

    app = App()
    async with app.run_test(size=(width, 24)) as pilot:
        app.push_screen(Confirm("sdpa.py was saved by another program while you have unsaved edits here.",
                                yes="Load the saved file, drop my edits", no="Keep my edits"))
        await pilot.pause()
        dialog = app.screen.query_one("Vertical")
        for button in app.screen.query(Button):
            label = str(button.label)
            assert button.content_region.width >= len(label), (label, button.content_region)
            assert dialog.content_region.contains_region(button.region), (label, button.region)


async def test_a_folder_renamed_outside_is_taken_in_without_a_key(app, ctx):
    """Renaming a folder (as Obsidian does) left Notes listing the old paths and the session
    holding notes that could no longer be read, until some note changed."""
    vault = ctx.paths.vault_dir
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await pilot.press("n")
        await settle(pilot)
        before = {row.path for row in app.screen.rows}
        assert any(path.startswith("基础/") for path in before)
        (vault / "基础").rename(vault / "basics")
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and not any(r.path.startswith("basics/") for r in app.screen.rows):
            await pilot.pause(0.1)
        await settle(pilot)
        paths = {row.path for row in app.screen.rows}
        assert any(path.startswith("basics/") for path in paths), paths
        assert not any(path.startswith("基础/") for path in paths), paths


async def test_a_note_replaced_by_a_link_to_another_is_not_studied_twice(app, ctx):
    """`rm a.md; ln -s b.md a.md` while the app runs: the app read a.md again as an edited note
    (b.md's text under a.md's path, b.md listed twice); the whole vault is loaded again, and the
    link is an alias, as a fresh load says."""
    vault = ctx.paths.vault_dir
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await pilot.press("n")
        await settle(pilot)
        (vault / "基础" / "cls.md").unlink()
        os.symlink("层归一化.md", vault / "基础" / "cls.md")
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and "基础/cls.md" in {r.path for r in app.screen.rows}:
            await pilot.pause(0.1)
        await settle(pilot)
        paths = sorted(row.path for row in app.screen.rows)
        assert "基础/cls.md" not in paths and paths.count("基础/层归一化.md") == 1, paths


async def test_a_note_suspended_elsewhere_leaves_the_review_unrated(app, ctx):
    """`studyapp suspend` from another shell while the note is on screen: the app rated it
    anyway (a review logged after the suspension)."""
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await pilot.press("r")
        await settle(pilot)
        shown = app.screen.card.path
        before = (ctx.paths.vault_dir / shown).read_bytes()
        with ReviewService(ctx) as cli:  # what `studyapp suspend` does, in another process
            cli.set_suspended(shown, True)
        await pilot.press("space", "3")
        await settle(pilot)
        assert review_count(app) == 0
        assert (ctx.paths.vault_dir / shown).read_bytes() == before
        assert notified(app, "suspended")
        assert app.screen.card is None or app.screen.card.path != shown


async def test_the_watcher_comes_back_after_a_symlink_loop(app, ctx, monkeypatch):
    """One symbolic link to itself in the vault stopped the vault watcher (and the review log's)
    for the rest of the run: edits made after the link was removed never showed."""
    import studyapp.tui.app as tui_app

    monkeypatch.setattr(tui_app, "WATCH_RETRY_SECONDS", 0.5)
    path = ctx.paths.vault_dir / SCALING
    loop = ctx.paths.vault_dir / "loop.md"
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await pilot.press("r")
        await settle(pilot)
        screen = app.screen
        assert screen.card.path == SCALING
        os.symlink("loop.md", loop)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and not notified(app, "Not watching"):
            await pilot.pause(0.1)
        loop.unlink()
        await pilot.pause(1.5)  # the watch starts again
        path.write_text(path.read_text(encoding="utf-8").replace("为什么注意力", "为何注意力"), encoding="utf-8")
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline and not screen.card.title.startswith("为何"):
            await pilot.pause(0.1)
        assert screen.card.title.startswith("为何")


async def test_a_rating_while_another_process_writes_gives_up_quickly(app, ctx):
    """With another process holding the writer lock (a long sync --full or rebuild), a rating
    froze the whole app for 20 s, ctrl+q included: the app waits a few seconds, then says so."""
    import subprocess
    import sys

    hold = ("import fcntl, sys, time\nhandle = open(sys.argv[1], 'a')\nfcntl.flock(handle, fcntl.LOCK_EX)\n"
            "print('held', flush=True)\ntime.sleep(30)\n")
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await pilot.press("r")
        await settle(pilot)
        holder = subprocess.Popen([sys.executable, "-c", hold, str(ctx.paths.writer_lock_file)],
                                  stdout=subprocess.PIPE, text=True)
        try:
            assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
            started = time.monotonic()
            await pilot.press("space", "3")
            await settle(pilot)
            waited = time.monotonic() - started
        finally:
            holder.kill()
            holder.wait()
        assert waited < 10, waited
        assert review_count(app) == 0 and notified(app, "still writing")
        await pilot.press("3")  # the lock is free again: the same rating goes through
        await settle(pilot)
        assert review_count(app) == 1
