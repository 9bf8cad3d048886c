"""Pure helpers of the drawn widgets: CJK-aware label fitting and heatmap shading."""

from __future__ import annotations

from rich.cells import cell_len

from studyapp.tui.widgets.bars import fit_label
from studyapp.tui.widgets.heatmap import level


def test_fit_label_pads_and_crops_by_terminal_cells():
    assert fit_label("注意力", 8) == "注意力  "  # three wide characters take six cells
    assert cell_len(fit_label("Transformer", 8)) == 8
    cropped = fit_label("多头注意力机制详解", 9)
    assert cell_len(cropped) == 9 and cropped.endswith("…")
    assert cell_len(fit_label("a注意b", 5)) == 5


def test_heatmap_levels_split_the_busiest_day_in_quarters():
    assert level(0, 10) == 0
    assert level(1, 10) == 1
    assert level(10, 10) == 4
    assert [level(n, 8) for n in range(1, 9)] == [1, 1, 2, 2, 3, 3, 4, 4]
    assert level(3, 0) == 0
    assert level(1, 1) == level(3, 3) == 4 and [level(n, 3) for n in (1, 2)] == [2, 3]  # busiest: darkest


async def test_a_huge_note_is_shown_cut_with_a_word_not_frozen_on():
    """A 5 MB note (a clipped page, a log) took 7 s of the UI thread to render whole, keys
    unanswered; the viewer renders the first part and says how much is left out."""
    import re

    from textual.app import App

    from studyapp.tui.widgets.answer import MAX_SHOWN_CHARS, Answer

    paragraph = "Lorem ipsum dolor sit amet, **consectetur** adipiscing elit. " * 8 + "\n\n"
    huge = paragraph * (5_000_000 // len(paragraph))

    class Viewer(App):
        def compose(self):
            yield Answer(id="view")

    app = Viewer()
    async with app.run_test(size=(100, 30)) as pilot:
        view = app.query_one(Answer)
        view.show(huge)
        await pilot.pause()
        shown = "\n".join(strip.text for strip in view._strips)
        left = re.search(r"\(([\d,]+)k characters\) is not shown here", shown)
        assert left is not None, shown[-300:]
        assert abs(int(left[1].replace(",", "")) - (len(huge) - MAX_SHOWN_CHARS) // 1000) <= 1
        assert "*The rest" not in shown  # the last line is markdown, not code
        assert shown.count("Lorem ipsum") < len(huge) // len(paragraph) * 8
        view.show("```python\n" + "x = 1\n" * (MAX_SHOWN_CHARS // 6 + 10) + "```\n")  # cut inside code
        await pilot.pause()
        tail = "\n".join(strip.text for strip in view._strips[-6:])
        assert "not shown here" in tail and "*The rest" not in tail, tail
        view.show(paragraph * 3)  # an ordinary note is shown whole, without the word
        await pilot.pause()
        assert "not shown here" not in "\n".join(strip.text for strip in view._strips)
