"""Control characters in a note's tags (YAML escapes `"\\e[31mred"`, `"\\x07bell"`) reach the
terminal raw: tmux showed the tag drawn red and its row shifted left by the escape's width,
leaving stale cells (`0%  0%`) at its end; the bell was dropped without a trace."""

from __future__ import annotations

import pytest
from textual.widgets import Tree

from studyapp.tui.widgets.bars import MasteryBars

from .conftest import app_with_grader, settle
from .test_tui_drills import StubGrader

NOTE = """---
created: '2026-11-01'
last_reviewed: '2026-11-10'
next_review: '2026-11-20'
review_count: 2
difficulty: medium
mastery_level: 0.5
tags: ["\\e[31mred", "\\x07bell"]
related_outlines: []
---
# Escapes in tags

## 面试标准答案
Esc.
"""


def _app(ctx):
    (ctx.paths.vault_dir / "escapes.md").write_text(NOTE, encoding="utf-8")
    return app_with_grader(ctx, StubGrader())


def _bar_labels(bars: MasteryBars) -> str:
    return bars.render().plain


@pytest.mark.parametrize("key, bars", [(None, "#today-mastery"), ("S", "#stats-mastery")],
                         ids=["today", "stats"])
async def test_mastery_bars_show_control_characters_as_symbols(ctx, key, bars):
    app = _app(ctx)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        if key:
            await pilot.press(key)
            await settle(pilot)
        shown = _bar_labels(app.screen.query_one(bars, MasteryBars))
        assert "red" in shown
        assert "\x1b" not in shown and "␛[31mred" in shown, repr(shown)
        assert "␇bell" in shown, repr(shown)


async def test_notes_tag_tree_shows_control_characters_as_symbols(ctx):
    app = _app(ctx)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await pilot.press("n")
        await settle(pilot)
        tree = app.screen.query_one("#note-tree", Tree)
        tags = next(node for node in tree.root.children if str(node.label) == "Tags")
        labels = [node.label.plain for node in tags.children]
        assert any("red" in label for label in labels), labels
        assert not any("\x1b" in label for label in labels), labels
        assert "␛[31mred" in labels and "␇bell" in labels, labels
