"""The Notes filter with several words: it looked for the words as one piece of text, so
"attention mask" did not find a note titled "Mask for attention". Now a note is listed when
each word is somewhere in its title, path or text, in any order and any case."""

from __future__ import annotations

from textual.widgets import DataTable

from .conftest import app_with_grader, settle
from .test_tui_drills import StubGrader

NOTES = {
    "mask-for-attention.md": "# Mask for attention\n\nWhy the scores get minus infinity.\n",
    "attention-mask.md": "# Attention mask\n\nThe words in their order.\n",
    "causal.md": "# Causal attention\n\nThe MASK hides the positions after the query's.\n",
    "masks/padding.md": "# Padding\n\nAttention skips the pad tokens.\n",
    "scaling.md": "# Attention scaling\n\nDivide the scores by sqrt(d_k).\n",
    "softmax.md": "# Softmax\n\nMasked rows are all minus infinity.\n",
}
EVERY_WORD = {"mask-for-attention.md", "attention-mask.md", "causal.md", "masks/padding.md"}
"""Each has both words: in the title (reversed, or in order), title and text, path and text."""


async def test_a_filter_of_two_words_lists_the_notes_with_both_in_any_order(ctx):
    for path, text in NOTES.items():
        file = ctx.paths.vault_dir / path
        file.parent.mkdir(parents=True, exist_ok=True)
        file.write_text(text, encoding="utf-8")
    app = app_with_grader(ctx, StubGrader())
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await pilot.press("n")
        await settle(pilot)
        await pilot.press("slash", *"Attention MASK")
        await settle(pilot)
        table = app.screen.query_one("#note-table", DataTable)
        listed = {key.value for key in table.rows}
        assert listed == EVERY_WORD, listed
        assert app.study.search_notes("mask attention") == frozenset(EVERY_WORD)
        await pilot.press(*" softmax")  # a third word narrows it further: none has all three
        await settle(pilot)
        assert table.row_count == 0
