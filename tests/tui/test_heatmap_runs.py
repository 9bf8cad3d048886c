"""The heatmap draws runs of one shade as one span (fewer spans make the first frame quicker),
character for character and colour for colour what one span per day drew."""

from __future__ import annotations

import random
from datetime import date, timedelta

from rich.console import Console
from rich.text import Text

from studyapp.tui.widgets.heatmap import DAY_LABELS, LEVEL_COLOURS, Heatmap, level


def one_span_per_day(counts: dict[date, int], end: date, weeks: int) -> Text:
    """The rows as drawn before: a span for each day."""
    last_monday = end - timedelta(days=end.weekday())
    first_monday = last_monday - timedelta(weeks=weeks - 1)
    busiest = max(counts.values(), default=0)
    text = Text()
    for weekday in range(7):
        text.append(f"{DAY_LABELS[weekday]:<4}", style="dim")
        for week in range(weeks):
            day = first_monday + timedelta(weeks=week, days=weekday)
            if day > end:
                text.append("  ")
                continue
            text.append("■ ", style=LEVEL_COLOURS[level(counts.get(day, 0), busiest)])
        text.append("\n")
    return text


def cells(text: Text) -> list[tuple[str, str]]:
    """Each character with the style it is drawn in."""
    console = Console(width=200, color_system="truecolor")
    return [(ch, str(seg.style or "")) for seg in text.render(console) for ch in seg.text]


class Sized(Heatmap):
    width = 110

    @property
    def size(self):
        from textual.geometry import Size

        return Size(self.width, 9)


def test_runs_draw_what_one_span_per_day_drew():
    rng = random.Random(3)
    for end in (date(2026, 11, 22), date(2026, 3, 1), date(2025, 12, 31)):
        for density in (0.0, 0.05, 0.5, 1.0):
            counts = {end - timedelta(days=i): rng.randint(1, 9)
                      for i in range(400) if rng.random() < density}
            widget = Sized()
            widget.set_data(counts, end)
            drawn = widget.render()
            weeks = min(53, max(1, (Sized.width - 4) // 2))
            expected = one_span_per_day(counts, end, weeks)
            lines = drawn.split("\n")
            grid = Text("\n").join(lines[1:8])
            grid.append("\n")
            assert grid.plain == expected.plain
            assert cells(grid) == cells(expected)
