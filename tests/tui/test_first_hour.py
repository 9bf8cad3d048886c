"""What a new user ran into in their first hour with the real app (driven in tmux), each
pinned here against the real facade: a key the footer never named, a column cut by a
scroll bar, a filter with no way out, a give-up that showed an empty table, a chart counting
half attempts, an answer that hid the rest of the note without saying so."""

from __future__ import annotations

import re
import threading

from textual.widgets import DataTable, Input, Static

from studyapp.tui.screens.drill import DrillScreen
from studyapp.tui.screens.drills import DrillsScreen
from studyapp.tui.screens.note_view import NoteViewScreen
from studyapp.tui.screens.notes import NotesScreen
from studyapp.tui.screens.review import ReviewScreen
from studyapp.tui.screens.today import TodayScreen
from studyapp.tui.widgets.answer import Answer

from .conftest import app_with_grader, settle
from .sample_vault import write_vault
from .test_tui_drills import StubGrader
from .test_tui_footer import footer_keys


def answer_text(answer: Answer) -> str:
    return "\n".join(strip.text for strip in answer._strips)


async def test_the_drills_screen_names_its_open_key_and_o_opens_the_drill(ctx):
    """The Drills footer showed only the app's keys: the table's own Enter hides the screen's
    "Open drill" key, so nothing said how to open a drill. `o` opens it, as in Notes."""
    write_vault(ctx.paths.vault_dir)
    app = app_with_grader(ctx, StubGrader())
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press("d")
        await settle(pilot)
        assert isinstance(app.screen, DrillsScreen)
        assert "o" in footer_keys(app)
        await pilot.press("down", "o")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, DrillScreen) and screen.drill_id == "safe_softmax"


async def test_a_filter_whose_body_matches_come_later_keeps_the_path_column_in_view(ctx):
    """Typed at a person's pace, the filter first shows the title matches (too few rows to
    scroll), then the body matches arrive: the table was fitted to the width without a scroll
    bar and the bar that came with the rows cut every path's last characters ("….m")."""
    vault = ctx.paths.vault_dir
    for index in range(40):
        folder = vault / "attention-basics" / f"week-{index:02d}"
        folder.mkdir(parents=True)
        title = f"Why softmax saturates, question {index}" if index < 3 else f"Question {index} about scaling"
        (folder / "why-the-attention-scores-are-scaled-and-masked.md").write_text(
            f"# {title}\n\nThe softmax saturates without the scale.\n", encoding="utf-8")
    app = app_with_grader(ctx, StubGrader())
    async with app.run_test(size=(120, 35)) as pilot:
        await settle(pilot)
        await pilot.press("n")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, NotesScreen)
        gate = threading.Event()
        search = app.study.search_notes

        def slow_search(text, should_stop=None):  # the body search of a big vault takes a while
            gate.wait(10)
            return search(text, should_stop=should_stop)

        app.study.search_notes = slow_search
        await pilot.press("slash", *"softmax")
        await pilot.pause()
        table = screen.query_one("#note-table", DataTable)
        assert table.row_count == 3  # the title matches, shown at once
        gate.set()
        await settle(pilot)
        assert table.row_count == 40
        shown = table.scrollable_content_region.width
        widths = [column.get_render_width(table) for column in table.ordered_columns]
        assert sum(widths) <= shown, (widths, shown)
        paths = [str(table.get_row_at(index)[4]) for index in range(table.row_count)]
        assert all(path.endswith("masked.md") for path in paths), paths[:3]


async def test_escape_leaves_the_notes_filter_and_the_screen_keys_work_again(ctx):
    """In the filter, Escape did nothing and the footer showed only "/ Filter": every key was
    text, so a new user could not get back to the table or to another screen."""
    write_vault(ctx.paths.vault_dir)
    app = app_with_grader(ctx, StubGrader())
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await pilot.press("n")
        await settle(pilot)
        await pilot.press("slash", *"soft")
        await settle(pilot)
        screen = app.screen
        field = screen.query_one("#note-filter", Input)
        assert app.focused is field
        assert "escape" in footer_keys(app)  # the way out is shown
        await pilot.press("escape")
        await settle(pilot)
        assert app.focused is screen.query_one("#note-table", DataTable)
        assert field.value == "soft"  # the filter stays; only the focus left it
        await pilot.press("t")
        await settle(pilot)
        assert isinstance(app.screen, TodayScreen)


async def test_giving_up_before_any_run_shows_the_labelled_reference_and_no_empty_table(ctx):
    """Giving up before the first run showed an empty "Check  Message" table header in the
    results and the reference code below it with nothing saying what it was."""
    write_vault(ctx.paths.vault_dir)
    app = app_with_grader(ctx, StubGrader())
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        app.action_open_drill("sdpa")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, DrillScreen)
        await pilot.press("f3")
        await settle(pilot)
        await pilot.press("y")
        await settle(pilot)
        assert screen.proposal is not None
        assert not screen.query_one("#checks", DataTable).display
        assert not screen.query_one("#verdict-summary", Static).display
        reference = screen.query_one("#reference-label", Static)
        assert reference.display and "Reference solution" in str(reference.render())
        assert screen.query_one("#reference").display


async def test_the_drill_attempts_chart_counts_whole_attempts(ctx):
    """Three attempts on one day drew a y axis of 0.00, 0.50, ... 3.00: attempts come whole."""
    write_vault(ctx.paths.vault_dir)
    app = app_with_grader(ctx, StubGrader())
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        app.action_open_drill("sdpa")
        await settle(pilot)
        for _ in range(3):
            await pilot.press("ctrl+r")
            await settle(pilot)
        await pilot.press("escape")
        await settle(pilot)
        await pilot.press("S")
        await settle(pilot)
        plot = app.screen.query_one("#drill-history")
        drawn = re.sub(r"\x1b\[[0-9;]*m", "", plot.plt.build())
        ticks = re.findall(r"^\s*([0-9.]+)\s*┤", drawn, flags=re.MULTILINE)
        assert ticks, drawn
        assert all("." not in tick for tick in ticks), ticks


LONG_NOTE = """# Layer norm vs batch norm

## Point 1

Layer norm normalises each token over its features.

## Point 2

Batch norm uses the batch's statistics.
"""


async def test_an_answer_that_is_part_of_the_note_says_the_note_goes_on(ctx):
    """A user's note with several `##` sections answered with the first section only, and
    nothing said the rest existed: it looked as if the note had been cut."""
    (ctx.paths.vault_dir / "norms.md").write_text(LONG_NOTE, encoding="utf-8")
    (ctx.paths.vault_dir / "short.md").write_text("# Short\n\nOnly this.\n", encoding="utf-8")
    ctx.settings.new_drills_per_day = 0
    app = app_with_grader(ctx, StubGrader())
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await pilot.press("r")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, ReviewScreen)
        seen = {}
        for _ in range(2):
            await pilot.press("space")
            await settle(pilot)
            seen[screen.card.path] = answer_text(screen.query_one("#answer", Answer))
            await pilot.press("f")  # the whole note: nothing more to point at
            await settle(pilot)
            whole = answer_text(screen.query_one("#answer", Answer))
            assert "Point 2" in whole or screen.card.path == "short.md"
            assert "f shows" not in whole
            await pilot.press("3")
            await settle(pilot)
        assert "Point 2" not in seen["norms.md"] and "f shows the whole note" in seen["norms.md"]
        assert "f shows" not in seen["short.md"]  # the answer is the whole note already


async def test_an_empty_note_opened_from_notes_says_it_is_empty(ctx):
    """An empty note opened from Notes was a blank box; the review says it has no text."""
    (ctx.paths.vault_dir / "empty.md").write_text("", encoding="utf-8")
    app = app_with_grader(ctx, StubGrader())
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await pilot.press("n")
        await settle(pilot)
        await pilot.press("o")
        await settle(pilot)
        assert isinstance(app.screen, NoteViewScreen)
        assert "no text beyond its title" in answer_text(app.screen.query_one(Answer))


DUE_NOTE = """---
created: '2026-10-01'
last_reviewed: '2026-11-12'
next_review: '2026-11-22'
review_count: 3
difficulty: medium
mastery_level: 0.4
drills: [sdpa]
tags: [attention]
---
# Why scale attention scores by sqrt(d_k)

## 面试标准答案
The dot products grow with d_k.
"""


async def test_the_due_drill_page_names_enter_to_open_it_not_the_notes_keys(ctx):
    """Past the notes, the page offering the day's drill kept the note keys in the footer:
    "space Answer", and "f Note", "e Edit" dimmed, while Enter, which opens the drill, was
    named only in the text; the summary kept the dimmed note keys too."""
    (ctx.paths.vault_dir / "scale.md").write_text(DUE_NOTE, encoding="utf-8")
    app = app_with_grader(ctx, StubGrader())
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press("r")
        await settle(pilot)
        review = app.screen
        assert isinstance(review, ReviewScreen)
        await pilot.press("space", "3")
        await settle(pilot)
        assert review.card is None and review.due_drill is not None
        keys = footer_keys(app)
        assert "enter" in keys and "escape" in keys
        assert not {"space", "f", "e"} & set(keys), keys
        await pilot.press("enter")
        await settle(pilot)
        drill = app.screen
        assert isinstance(drill, DrillScreen) and drill.drill_id == "sdpa"
        await pilot.press("f3")
        await settle(pilot)
        await pilot.press("y")
        await settle(pilot)
        await pilot.press("enter")  # records Again: back to the session, now finished
        await settle(pilot)
        assert app.screen is review and review.finished
        keys = footer_keys(app)
        assert not {"space", "f", "e", "enter"} & set(keys), keys
        assert {"u", "escape"} <= set(keys)


async def test_ctrl_s_in_the_drill_says_the_file_was_saved(ctx):
    """ctrl+s wrote the file and said nothing: a new user could not tell it had saved."""
    from .conftest import notified

    write_vault(ctx.paths.vault_dir)
    app = app_with_grader(ctx, StubGrader())
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        app.action_open_drill("sdpa")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, DrillScreen)
        await pilot.press("#", "1")
        await pilot.press("ctrl+s")
        await settle(pilot)
        assert "#1" in screen.path.read_text(encoding="utf-8")
        assert notified(app, "Saved sdpa.py")
        app.clear_notifications()
        await pilot.press("ctrl+s")  # nothing new: still an answer
        await settle(pilot)
        assert notified(app, "sdpa.py is saved")


async def test_a_drill_back_on_a_fresh_starter_does_not_show_the_old_pass(ctx):
    """A drill came back due a week later: the editor held a fresh starter (`raise
    NotImplementedError`), yet the results said "PASS all core checks pass (last run ...)"
    and the status line "PASS": that verdict was of the file now kept in backups/."""
    from datetime import timedelta

    from .test_tui_drill_reviews import PASS, ScriptedGrader

    (ctx.paths.vault_dir / "scale.md").write_text(DUE_NOTE, encoding="utf-8")
    app = app_with_grader(ctx, ScriptedGrader(PASS))
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("r")
        await settle(pilot)
        await pilot.press("space", "3")
        await settle(pilot)
        await pilot.press("enter")  # the new drill
        await settle(pilot)
        drill = app.screen
        assert isinstance(drill, DrillScreen)
        await pilot.press("#", "x", "ctrl+r")
        await settle(pilot)
        assert drill.proposal is not None
        await pilot.press("enter")  # Good: due again in some days
        await settle(pilot)
        await pilot.press("escape")
        await settle(pilot)
        ctx.frozen_now = ctx.frozen_now + timedelta(days=60)
        app.action_open_drill("sdpa")
        await settle(pilot)
        back = app.screen
        assert isinstance(back, DrillScreen) and back is not drill
        assert back.backup is not None  # it came back: the starter, the old file kept
        assert "NotImplementedError" in back.path.read_text(encoding="utf-8")
        status = str(back.query_one("#grade-status", Static).render())
        assert "PASS" not in status and "ctrl+r runs the grader" in status
        assert not back.query_one("#result-box").display


async def test_pointing_the_app_at_ones_own_notes_is_not_called_a_repair(tmp_path):
    """The README's next step, `vault = "..."` for one's own notes, opened the app on a yellow
    "Review history repaired" warning: nothing was broken, the data dir's database had served
    the starter deck and was kept as a backup. The line is said, under a neutral title."""
    from studyapp.cli import main
    from studyapp.context import build_context

    from .conftest import FROZEN_NOW

    starter, mine, data = tmp_path / "starter", tmp_path / "mine", tmp_path / "data"
    starter.mkdir()
    mine.mkdir()
    (starter / "a.md").write_text("# A\n\nanswer\n", encoding="utf-8")
    (mine / "b.md").write_text("# B\n\nanswer\n", encoding="utf-8")
    assert main(["rate", "a.md", "--rating", "good", "--vault", str(starter), "--data-dir", str(data),
                 "--now", FROZEN_NOW]) == 0
    ctx = build_context(vault=str(mine), data_dir=str(data), now=FROZEN_NOW, seed=False)
    app = app_with_grader(ctx, StubGrader())
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        said = [n for n in app._notifications if "another vault" in n.message]
        assert said, [(n.title, n.message) for n in app._notifications]
        assert all("repaired" not in n.title.lower() for n in said), [n.title for n in said]


async def test_a_mistyped_theme_is_said_in_the_app(ctx):
    """The CLI warns on stderr; the app fell back to its default theme without a word (a
    warning printed before the app took the screen is hidden until it quits)."""
    write_vault(ctx.paths.vault_dir)
    ctx.settings.theme = "dracola"
    app = app_with_grader(ctx, StubGrader())
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        messages = [n.message for n in app._notifications]
    assert app.theme == "textual-dark"
    assert any("dracola" in m and "dracula" in m for m in messages), messages
