"""The review loop keeps the scheduling state truthful, seen through the keys: suspend is
undoable and restores exactly, a drill pass writes only the notes it may, the clock cannot go
backwards, and the counts move as Anki's do."""

from __future__ import annotations

import pytest
from textual.widgets import Static

from studyapp.tui.app import StudyApp
from studyapp.tui.screens.review import ReviewScreen

from .conftest import app_with_grader, real_app, settle
from .sample_vault import NOTES, write_vault
from .test_tui_drills import StubGrader, open_sdpa

SCALING = "注意力/缩放因子.md"
HEADS = "注意力/多头.md"


@pytest.fixture
def vault(ctx):
    return write_vault(ctx.paths.vault_dir)


def table(app, name):
    return [tuple(r) for r in app.study.service.store.conn.execute(f"SELECT * FROM {name} ORDER BY 1")]


async def start_review(pilot) -> ReviewScreen:
    await settle(pilot)
    await pilot.press("r")
    await settle(pilot)
    assert isinstance(pilot.app.screen, ReviewScreen)
    return pilot.app.screen


def notifications(app) -> list[str]:
    return [n.message for n in app._notifications]


async def test_suspend_is_undone_by_u_and_the_new_note_stays_new(ctx, vault):
    app = StudyApp(ctx)
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await start_review(pilot)
        await pilot.press("space", "3")  # the overdue review first; the new notes follow
        assert screen.card.path == HEADS and screen.card.is_new
        cards, counts = table(app, "cards"), app.study.today_counts()
        await pilot.press("s")
        assert screen.card.path != HEADS
        await pilot.press("u")
        assert screen.card.path == HEADS and screen.card.is_new
        assert any("Undid the suspension" in m for m in notifications(app))
        assert table(app, "cards") == cards, "the card rows are exactly as before the suspension"
        assert app.study.today_counts() == counts
        await pilot.press("u")  # and the rating before it is next
        assert screen.card.path == SCALING
        assert table(app, "reviews") == []


async def test_suspend_and_resume_in_notes_keep_a_new_note_new(ctx, vault):
    app = StudyApp(ctx)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        before = app.study.today_counts()
        app.study.suspend(HEADS)
        app.study.unsuspend(HEADS)
        assert app.study.today_counts() == before
        screen = await start_review(pilot)
        paths = []
        while screen.card is not None and len(paths) < 6:
            paths.append((screen.card.path, screen.card.is_new))
            await pilot.press("space", "4")
        assert (HEADS, True) in paths


async def test_a_drill_pass_writes_only_reviewed_notes_it_trains(ctx, vault):
    declared_new = NOTES[HEADS].replace("related_outlines: []\n", "related_outlines: []\ndrills: [sdpa]\n")
    (vault / "注意力/声明但未复习.md").write_text(declared_new, encoding="utf-8")
    suggested = NOTES[HEADS].replace("拼接后再投影回模型维度。", "F.scaled_dot_product_attention(q, k, v), 缩放点积")
    (vault / "注意力/只是提到.md").write_text(suggested, encoding="utf-8")
    untouched = {p: (vault / p).read_bytes() for p in ("注意力/声明但未复习.md", "注意力/只是提到.md", HEADS)}
    app = app_with_grader(ctx, StubGrader())
    async with app.run_test(size=(100, 30)) as pilot:
        await open_sdpa(pilot)
        await pilot.press("ctrl+r")
        await settle(pilot)
    assert {p: (vault / p).read_bytes() for p in untouched} == untouched
    assert "mastery_level: 0.3\n" not in (vault / SCALING).read_text(encoding="utf-8")


async def test_a_review_before_the_notes_last_review_is_refused(ctx, vault):
    # a sync brought a review from a later day than the app's clock (frozen at 2026-11-22)
    path = vault / SCALING
    path.write_text(NOTES[SCALING].replace("last_reviewed: '2026-11-10'", "last_reviewed: '2026-11-25'"),
                    encoding="utf-8")
    before = path.read_bytes()
    app = StudyApp(ctx)
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await start_review(pilot)
        assert screen.card.path == SCALING
        await pilot.press("space", "3")
        await settle(pilot)
        assert screen.card.path == SCALING
        assert any("last reviewed 2026-11-25" in m for m in notifications(app))
    assert path.read_bytes() == before


async def test_progress_shows_new_learning_review_and_drops_after_good(ctx, vault):
    app = StudyApp(ctx)
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await start_review(pilot)

        def line() -> str:
            return str(screen.query_one("#review-progress", Static).render())

        assert "3 new · 0 learning · 1 review" in line()
        await pilot.press("space", "3")
        assert "3 new · 0 learning · 0 review" in line()
        await pilot.press("space", "3")  # a new note's first Good: a learning step in 10 minutes
        assert "2 new · 0 learning · 0 review" in line()
        assert "1 step later" in line()


async def test_today_shows_the_same_counts_as_the_review(ctx, vault):
    app = StudyApp(ctx)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        assert str(app.screen.query_one("#due-counts", Static).render()) == "3 · 0 · 1"
        await start_review(pilot)
        await pilot.press("space", "3", "space", "3")
        await pilot.press("escape")
        await settle(pilot)
        assert str(app.screen.query_one("#due-counts", Static).render()) == "2 · 0 · 0"


CLIP = "Attention 注意力机制\nAttention 注意力机制\n注意力机制是一个宽泛的概念。\n例如, Self-Attention 的 Q、K、V 来源于同一个输入。\n"


async def open_from_notes(pilot, text: str) -> None:
    """Notes (n), filtered to the one note holding `text`, opened whole (o)."""
    await pilot.press("n")
    await settle(pilot)
    pilot.app.screen.query_one("#note-filter").value = text
    await settle(pilot)
    await pilot.press("o")
    await settle(pilot)


def answer_lines(screen) -> list[str]:
    from studyapp.tui.widgets.answer import Answer

    return [strip.text.strip() for strip in screen.query_one(Answer)._strips if strip.text.strip()]


async def test_a_plain_clip_answers_with_its_lines_and_the_whole_note_shows_no_title(ctx, vault):
    (vault / "基础/剪藏.md").write_text(CLIP, encoding="utf-8")
    app = StudyApp(ctx)
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await start_review(pilot)
        for _ in range(6):
            if screen.card.path == "基础/剪藏.md":
                break
            await pilot.press("space", "4")
        assert screen.card.path == "基础/剪藏.md"
        await pilot.press("space")
        assert answer_lines(screen) == ["注意力机制是一个宽泛的概念。", "例如, Self-Attention 的 Q、K、V 来源于同一个输入。"]
        await pilot.press("f")
        assert "Attention 注意力机制" not in answer_lines(screen)
        await pilot.press("escape")
        await settle(pilot)
        await open_from_notes(pilot, "剪藏")
        assert answer_lines(app.screen)[0] == "注意力机制是一个宽泛的概念。"


async def test_notes_has_a_path_column_and_filters_by_body_text(ctx, vault):
    twin = NOTES[HEADS].replace("每个头在不同的子空间", "另一份笔记: 每个头在不同的子空间")
    (vault / "基础/多头-副本.md").write_text(twin, encoding="utf-8")
    app = StudyApp(ctx)
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(pilot)
        await pilot.press("n")
        await settle(pilot)
        table = app.screen.query_one("#note-table")
        assert [str(c.label) for c in table.columns.values()][-1] == "Path"
        same_title = [table.get_row(k) for k in table.rows if "多头注意力相比单头" in str(table.get_row(k)[3])]
        assert sorted(str(r[-1]) for r in same_title) == ["基础/多头-副本.md", HEADS]
        app.screen.query_one("#note-filter").value = "饱和区"  # only in the answer of one note
        await settle(pilot)
        assert [str(table.get_row(k)[-1]) for k in table.rows] == [SCALING]
        app.screen.query_one("#note-filter").value = "另一份笔记"
        await settle(pilot)
        assert [str(table.get_row(k)[-1]) for k in table.rows] == ["基础/多头-副本.md"]


async def test_a_saved_drill_file_keeps_its_final_newline(ctx, vault, shared_grader):
    from textual.widgets import TextArea

    app = real_app(ctx, shared_grader)
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await open_sdpa(pilot)
        screen.query_one("#code", TextArea).text = "def scaled_dot_product_attention(q, k, v):\n    return v"
        await pilot.press("ctrl+s")
        await settle(pilot)
        saved = (ctx.paths.workspace_dir / "sdpa.py").read_text(encoding="utf-8")
    assert saved == "def scaled_dot_product_attention(q, k, v):\n    return v\n"


async def test_notes_suspend_says_so_and_u_undoes_it(ctx, vault):
    from textual.widgets import DataTable

    app = StudyApp(ctx)
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(pilot)
        cards = table(app, "cards")
        await pilot.press("n")
        await settle(pilot)
        app.screen.query_one("#note-table", DataTable).focus()
        await pilot.press("s")
        await settle(pilot)
        assert any("Suspended" in m and "u undoes" in m for m in notifications(app))
        assert table(app, "cards") != cards
        await pilot.press("u")
        await settle(pilot)
        assert any("Undid the suspension" in m for m in notifications(app))
        assert table(app, "cards") == cards


async def test_a_long_plain_answer_shows_its_first_screenful_and_scrolls_by_keyboard(ctx, vault):
    from studyapp.tui.widgets.answer import Answer

    lines = "\n".join(f"第 {i} 行: 剪藏下来的一句话。" for i in range(80))
    (vault / "基础/剪藏.md").write_text(f"长剪藏\n{lines}\n", encoding="utf-8")
    app = StudyApp(ctx)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await start_review(pilot)
        for _ in range(6):
            if screen.card.path == "基础/剪藏.md":
                break
            await pilot.press("space", "4")
        await pilot.press("space")
        answer = screen.query_one(Answer)
        assert answer.scroll_y == 0 and answer_lines(screen)[0] == "第 0 行: 剪藏下来的一句话。"
        assert answer.virtual_size.height >= 80 > answer.size.height
        answer.focus()
        await pilot.press("pagedown")
        await settle(pilot)
        assert answer.scroll_y > 0


async def test_a_theme_picked_in_the_palette_goes_into_the_first_run_template(ctx):
    from studyapp.config import load_settings, write_default_config

    config = ctx.paths.config_file
    assert write_default_config(config)
    template = config.read_text(encoding="utf-8")
    app = StudyApp(ctx)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        app.action_change_theme()
        await settle(pilot)
        await pilot.press(*"nord", "enter")
        await settle(pilot)
        assert app.theme == "nord"
    assert config.read_text(encoding="utf-8") == template.replace('# theme = "textual-dark"', 'theme = "nord"')
    assert load_settings(config).theme == "nord"


async def test_a_note_open_in_notes_shows_an_outside_edit_without_a_key(ctx, vault):
    """The README: a note changed by an editor is shown as it is now. The whole-note view
    opened from Notes followed that only when opened again."""
    import time

    app = StudyApp(ctx)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await open_from_notes(pilot, "饱和区")
        view = app.screen
        assert "饱和区" in "\n".join(answer_lines(view))
        path = vault / SCALING
        path.write_text(path.read_text(encoding="utf-8").replace("饱和区", "平坦区"), encoding="utf-8")
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and "平坦区" not in "\n".join(answer_lines(view)):
            await pilot.pause(0.1)  # the vault watcher sees the edit
        assert app.screen is view and "平坦区" in "\n".join(answer_lines(view))
