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
