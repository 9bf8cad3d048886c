"""Horizontal bars with labels padded by display width, so Chinese tags line up."""

from __future__ import annotations

from rich.cells import cell_len, set_cell_size
from rich.text import Text
from textual.reactive import reactive
from textual.widget import Widget

from studyapp.textwidth import shown


def fit_label(label: str, width: int) -> str:
    """Crop or pad to exactly `width` terminal cells (a CJK character takes two)."""
    if cell_len(label) > width:
        return set_cell_size(label, width - 1) + "…"
    return set_cell_size(label, width)


class MasteryBars(Widget):
    """One bar per tag: `label  ██████░░░░  62%`."""

    DEFAULT_CSS = """
    MasteryBars { height: auto; width: 1fr; }
    """

    rows: reactive[tuple[tuple[str, float], ...]] = reactive(tuple, layout=True)

    def __init__(self, empty_text: str = "No reviews yet.", max_rows: int | None = None, **kwargs) -> None:
        super().__init__(**kwargs)
        self.empty_text = empty_text
        self.max_rows = max_rows

    def get_content_height(self, container, viewport, width: int) -> int:
        return max(1, len(self._visible_rows()))

    def _visible_rows(self):
        return self.rows[: self.max_rows] if self.max_rows else self.rows

    def render(self) -> Text:
        rows = [(shown(label), value) for label, value in self._visible_rows()]  # a tag's "\e[31m" as text
        if not rows:
            return Text(self.empty_text, style="dim")
        width = self.size.width or 40
        label_width = min(max(cell_len(label) for label, _ in rows), max(8, width // 3))
        bar_width = max(4, width - label_width - 7)
        text = Text(no_wrap=True, overflow="crop")
        for i, (label, value) in enumerate(rows):
            value = min(1.0, max(0.0, value))
            filled = round(value * bar_width)
            text.append(fit_label(label, label_width) + " ")
            text.append("█" * filled, style="green")
            text.append("░" * (bar_width - filled), style="dim")
            text.append(f" {value:>4.0%}")
            if i < len(rows) - 1:
                text.append("\n")
        return text
