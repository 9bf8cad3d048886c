"""The Today figures come first from a cheaper path (`today_counts`, which skips notes that
cannot be due yet); they must always agree with the full summary."""

from __future__ import annotations

import pytest

from studyapp.facade import StudyFacade

from .sample_vault import write_vault

LATER = """---
created: '2026-11-01'
last_reviewed: '{last}'
next_review: '2026-12-20'
review_count: {count}
difficulty: easy
mastery_level: 0.0
tags:
- 以后
related_outlines: []
---
# 一个还没到期的问题 {n}

## 答案
还早。
"""


@pytest.fixture
def facade(ctx):
    root = write_vault(ctx.paths.vault_dir)
    (root / "以后").mkdir()
    (root / "以后" / "旧的.md").write_text(LATER.format(last="2026-11-18", count=2, n=1), encoding="utf-8")
    new_later = LATER.format(last="null", count=0, n=2).replace("last_reviewed: 'null'", "last_reviewed: null")
    (root / "以后" / "新的.md").write_text(new_later, encoding="utf-8")
    session = StudyFacade(ctx)
    session.load()
    yield session
    session.close()


def figures(summary):
    return (summary.due_now, summary.new, summary.reviewed_today, summary.streak, summary.problems)


def test_counts_agree_with_the_full_summary(facade):
    counts = facade.today_counts()
    # one legacy note overdue; three new notes whose date has come; the December notes wait
    assert figures(counts) == (1, 3, 0, 0, 1)
    assert figures(counts) == figures(facade.today())


def test_counts_follow_reviews_and_suspensions(facade):
    facade.begin_review()
    facade.rate("注意力/缩放因子.md", 3)
    facade.suspend("注意力/多头.md")
    counts = facade.today_counts()
    assert (counts.due_now, counts.new, counts.reviewed_today, counts.streak) == (0, 2, 1, 1)
    assert figures(counts) == figures(facade.today())
    fresh = StudyFacade(facade.ctx)  # the cheap path again, without the cached full list
    try:
        fresh.load()
        assert figures(fresh.today_counts()) == figures(counts)
    finally:
        fresh.close()


async def test_today_says_a_drill_is_due_when_no_note_is(ctx):
    """Every note reviewed, one new drill due (its note was reviewed): Today does not say
    "Nothing due" while `r` offers the drill, and lists that drill, not the whole catalog."""
    from textual.widgets import Static

    from studyapp.reviews import ReviewService
    from studyapp.tui.app import StudyApp

    from .conftest import settle

    (ctx.paths.vault_dir / "a.md").write_text(
        "---\nreview_count: 0\nlast_reviewed: null\nnext_review: 2026-11-01\ndrills: [sdpa]\n---\n# A\n\nbody\n",
        encoding="utf-8")
    with ReviewService(ctx) as service:
        service.load()
        service.record_review("a.md", "easy")
    app = StudyApp(ctx)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        hint = str(app.screen.query_one("#today-hint", Static).render())
        assert "Nothing due" not in hint and "1 drill due" in hint and "r" in hint, hint
        drills = str(app.screen.query_one("#today-drills", Static).render())
        assert "Scaled dot-product" in drills and drills.count("\n") == 0, drills
