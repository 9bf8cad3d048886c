"""A GitHub-style calendar of reviews per day, drawn with coloured cells."""

from __future__ import annotations

from datetime import date, timedelta
from itertools import groupby

from rich.text import Text
from textual.reactive import reactive
from textual.widget import Widget

from studyapp.stats import DAY_LABELS, MAX_WEEKS, level

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
        weeks = min(MAX_WEEKS, max(1, (self.size.width - 4) // 2))
        last_monday = self.end - timedelta(days=self.end.weekday())
        first_monday = last_monday - timedelta(weeks=weeks - 1)
        busiest = max(self.counts.values(), default=0)
        text = Text(no_wrap=True, overflow="crop")
        month_row = [" "] * (weeks * 2)
        for week in range(weeks):
            monday = first_monday + timedelta(weeks=week)
            if monday.day <= 7 and week * 2 + 3 <= len(month_row):
                for i, ch in enumerate(monday.strftime("%b")):
                    month_row[week * 2 + i] = ch
        text.append("    " + "".join(month_row) + "\n", style="dim")
        for weekday in range(7):
            text.append(f"{DAY_LABELS[weekday]:<4}", style="dim")
            days = (first_monday + timedelta(weeks=week, days=weekday) for week in range(weeks))
            shades = (None if day > self.end else LEVEL_COLOURS[level(self.counts.get(day, 0), busiest)]
                      for day in days)
            # one span per run of days of one shade: a year of cells is ~370 spans otherwise,
            # and drawing them took longer than the rest of the Today screen's first frame
            for shade, run in groupby(shades):
                text.append(("■ " if shade else "  ") * len(list(run)), style=shade or "")
            text.append("\n")
        total = sum(n for d, n in self.counts.items() if first_monday <= d <= self.end)  # what is drawn
        text.append(f"    {total} review{'s' if total != 1 else ''} in {weeks} weeks", style="dim")
        return text
