"""A GitHub-style calendar of reviews per day, drawn with coloured cells."""

from __future__ import annotations

from datetime import date
from itertools import groupby

from rich.text import Text
from textual.reactive import reactive
from textual.widget import Widget

from studyapp.stats import DAY_LABELS, level, review_calendar

LEVEL_COLOURS = ("#2d333b", "#0e4429", "#006d32", "#26a641", "#39d353")
"""Empty, then four shades by share of the busiest day (the familiar contribution-graph palette)."""
__all__ = ["DAY_LABELS", "LEVEL_COLOURS", "Heatmap", "level"]


class Heatmap(Widget):
    """Weeks run left to right, Monday on top; the newest week is at the right edge."""

    DEFAULT_CSS = """
    Heatmap { height: 9; width: 1fr; }
    """

    counts: reactive[dict[date, int]] = reactive(dict, layout=False)
    end: reactive[date | None] = reactive(None)

    def set_data(self, counts: dict[date, int], end: date) -> None:
        self.end = end
        self.counts = counts

    def render(self) -> Text:
        if self.end is None:
            return Text("…", style="dim")
        calendar = review_calendar(self.counts, self.end, self.size.width)
        text = Text(no_wrap=True, overflow="crop")
        text.append("    " + calendar.months + "\n", style="dim")
        for weekday, row in enumerate(calendar.levels):
            text.append(f"{DAY_LABELS[weekday]:<4}", style="dim")
            # one span per run of days of one shade: a year of cells is ~370 spans otherwise,
            # and drawing them took longer than the rest of the Today screen's first frame
            for shade, run in groupby(None if lv is None else LEVEL_COLOURS[lv] for lv in row):
                text.append(("■ " if shade else "  ") * len(list(run)), style=shade or "")
            text.append("\n")
        total = calendar.total
        text.append(f"    {total} review{'s' if total != 1 else ''} in {calendar.weeks} weeks", style="dim")
        return text
