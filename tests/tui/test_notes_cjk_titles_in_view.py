"""The Notes list at 80 columns, on the sample vault's Chinese titles: the path took as many
cells as the title, and a title of two-cell characters showed its first five characters
("多头注意力…"), too few to tell "what about attention" the note asks."""

from __future__ import annotations

from studyapp.textwidth import display_width

from .conftest import app_with_grader, screen_lines, settle
from .sample_vault import write_vault
from .test_tui_drills import StubGrader

TITLES = ["为什么注意力分数要除以根号 d_k?", "多头注意力相比单头有什么好处?"]


async def test_chinese_titles_get_the_larger_share_at_80_columns(ctx):
    write_vault(ctx.paths.vault_dir)
    app = app_with_grader(ctx, StubGrader())
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press("n")
        await settle(pilot)
        lines = screen_lines(app)
        for title in TITLES:
            row = next((line for line in lines if title[:4] in line), None)
            assert row is not None, lines
            assert title[:7] in row, row  # at least seven characters (fourteen cells) of it
            assert "…" in row and display_width(row) == 80  # cut by cells, the row still 80 wide
