"""Each flow of the issue against the real vault, scheduler and database: keys in, state and
note files out."""

from __future__ import annotations

import os
from contextlib import contextmanager

import pytest
from textual.widgets import DataTable, Static

from studyapp.tui import editor
from studyapp.tui.app import StudyApp
from studyapp.tui.screens.review import ReviewScreen
from studyapp.tui.widgets.heatmap import Heatmap

from .conftest import settle
from .sample_vault import write_vault

SCALING = "注意力/缩放因子.md"


@pytest.fixture
def vault(ctx):
    return write_vault(ctx.paths.vault_dir)


async def start_review(pilot) -> ReviewScreen:
    await settle(pilot)
    await pilot.press("r")
    await settle(pilot)
    screen = pilot.app.screen
    assert isinstance(screen, ReviewScreen)
    return screen


async def test_review_good_writes_the_note_and_undo_restores_its_bytes(ctx, vault):
    path = vault / SCALING
    before = path.read_bytes()
    app = StudyApp(ctx)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await start_review(pilot)
        assert screen.card.path == SCALING  # overdue legacy review comes before new notes
        remaining = app.study.progress().remaining
        await pilot.press("space")
        assert "1.6mo" in str(screen.query_one("#rate-3").label)
        await pilot.press("3")
        after = path.read_text(encoding="utf-8")
        assert "last_reviewed: '2026-11-22'" in after
        assert "review_count: 4" in after
        assert "source: 自己整理" in after and after.endswith(before.decode("utf-8").split("---", 2)[2])
        assert screen.card.path != SCALING
        assert app.study.progress().remaining == remaining - 1
        await pilot.press("u")
        assert path.read_bytes() == before
        assert screen.card.path == SCALING and not screen.revealed


async def test_again_brings_the_note_back_in_the_same_session(ctx, vault):
    ctx.settings.new_drills_per_day = 0  # notes only: no drill follows them
    app = StudyApp(ctx)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await start_review(pilot)
        seen = []
        for _ in range(12):
            if screen.card is None:
                break
            seen.append(screen.card.path)
            rating = "1" if len(seen) == 1 else "4"
            await pilot.press("space", rating)
        assert seen.count(SCALING) == 2, seen
        assert screen.card is None and screen.finished
        summary = str(screen.query_one("#review-summary", Static).render())
        assert "Again 1" in summary


async def test_suspend_leaves_the_file_alone_and_skips_the_note(ctx, vault):
    path = vault / SCALING
    before = path.read_bytes()
    app = StudyApp(ctx)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await start_review(pilot)
        await pilot.press("s")
        assert screen.card.path != SCALING
        assert path.read_bytes() == before
        await pilot.press("escape")
        await settle(pilot)
        await pilot.press("r")
        await settle(pilot)
        assert app.screen.card.path != SCALING


async def test_edit_opens_editor_suspended_and_reloads(ctx, vault, monkeypatch, tmp_path):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "fake-editor").touch(mode=0o755)  # found on PATH, as the app checks before suspending
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("EDITOR", "fake-editor --wait")
    calls = []

    def fake_editor(command, path):
        calls.append(command)
        text = path.read_text(encoding="utf-8").replace("为什么注意力分数", "为何注意力分数")
        path.write_text(text, encoding="utf-8")
        return 0

    @contextmanager
    def fake_suspend(self):
        calls.append("suspended")
        yield

    monkeypatch.setattr(editor, "launch_editor", fake_editor)
    monkeypatch.setattr(StudyApp, "suspend", fake_suspend)  # headless tests have no terminal to give away
    app = StudyApp(ctx)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await start_review(pilot)
        await pilot.press("e")
        await settle(pilot)
        assert calls == ["suspended", ["fake-editor", "--wait"]]
        assert screen.card.title.startswith("为何注意力分数")


async def test_unwritable_note_is_a_notification_not_a_crash(ctx, vault):
    path = vault / SCALING
    app = StudyApp(ctx)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await start_review(pilot)
        path.write_text("---\ntags: [broken\n---\n# gone\n", encoding="utf-8")
        await pilot.press("space", "3")
        await settle(pilot)
        # broken since it was shown: not rated (whether the vault watcher or the rating saw it
        # first), and the learner is told
        title = "为什么注意力分数要除以根号 d_k?"
        assert any(n.severity == "warning" and title in n.message for n in app._notifications)
        assert path.read_text(encoding="utf-8") == "---\ntags: [broken\n---\n# gone\n"
        assert screen.card is not None


async def test_notes_lists_notes_and_problems(ctx, vault):
    app = StudyApp(ctx)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await pilot.press("n")
        await settle(pilot)
        table = app.screen.query_one("#note-table", DataTable)
        assert table.row_count == 4
        problems = str(app.screen.query_one("#note-problems", Static).render())
        assert "坏掉的.md" in problems
        titles = [str(table.get_row(key)[3]) for key in table.rows]
        assert "[CLS] 向量代表什么?" in titles  # brackets in a title are text, not markup
        app.screen.query_one("#note-filter").value = "layernorm"
        await settle(pilot)
        assert table.row_count == 1


async def test_navigate_to_stats_draws_the_history(ctx, vault):
    app = StudyApp(ctx)
    async with app.run_test(size=(100, 30)) as pilot:
        await start_review(pilot)
        await pilot.press("space", "3", "escape")
        await settle(pilot)
        await pilot.press("S")
        await settle(pilot)
        heatmap = app.screen.query_one("#stats-heatmap", Heatmap)
        assert sum(heatmap.counts.values()) == 1
        assert "1 review in" in str(heatmap.render())


async def test_a_vault_that_cannot_load_is_a_notification(tmp_path):
    from studyapp.context import build_context

    from .conftest import FROZEN_NOW

    ctx = build_context(vault=str(tmp_path / "missing"), data_dir=str(tmp_path / "data"), now=FROZEN_NOW, seed=False)
    app = StudyApp(ctx)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        assert not app.study_ready
        assert any(n.severity == "error" for n in app._notifications)
        assert "Could not load the vault" in str(app.screen.query_one("#today-hint", Static).render())
        await pilot.press("r")  # nothing to review yet: a hint, not a crash
        await settle(pilot)
        assert not isinstance(app.screen, ReviewScreen)


LONG_TITLE = "Why attention scores are divided by the square root of the key dimension, at length " * 2


@pytest.mark.parametrize("width", [80, 100, 160])
async def test_the_notes_table_keeps_every_column_in_view_with_long_titles(ctx, width):
    """At 80 and 100 columns a web clip's long title pushed the Path column off the screen
    (two notes of one title could not be told apart): titles and paths share what the fixed
    columns leave, a title cut at its end and a path in its middle (its first folder and the
    end of its file name stay); the tree narrows below 100 columns."""
    vault = ctx.paths.vault_dir
    for folder in ("transformers/attention/scaling", "interview-prep/2026/week-12"):
        (vault / folder).mkdir(parents=True)
        (vault / folder / "scaled-dot-product-attention-divisor.md").write_text(
            f"# {LONG_TITLE.strip()}\n\nBecause the dot products grow with d_k.\n", encoding="utf-8")
    app = StudyApp(ctx)
    async with app.run_test(size=(width, 30)) as pilot:
        await settle(pilot)
        await pilot.press("n")
        await settle(pilot)
        table = app.screen.query_one("#note-table", DataTable)
        shown = table.scrollable_content_region.width
        widths = [column.get_render_width(table) for column in table.ordered_columns]
        assert sum(widths) <= shown, (widths, shown)
        rows = [table.get_row_at(index) for index in range(table.row_count)]
        titles, paths = [str(row[3]) for row in rows], [str(row[4]) for row in rows]
        assert all(title.endswith("…") and LONG_TITLE.startswith(title[:-1]) for title in titles)
        whole = sorted(row.path for row in app.screen.rows)
        for path in paths:  # cut in the middle: its first folder and its end stay
            head, _, tail = path.partition("…")
            assert tail and any(w.startswith(head) and w.endswith(tail) for w in whole), path
        assert len(set(paths)) == 2  # still told apart
        await pilot.resize_terminal(200, 30)
        await settle(pilot)
        paths = [str(table.get_row_at(index)[4]) for index in range(table.row_count)]
        assert sorted(paths) == ["interview-prep/2026/week-12/scaled-dot-product-attention-divisor.md",
                                 "transformers/attention/scaling/scaled-dot-product-attention-divisor.md"]
