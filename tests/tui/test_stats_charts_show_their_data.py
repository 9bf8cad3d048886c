"""What the Stats charts draw: plotext writes a legend into the plot's top-left corner, where the
retention chart's 100 % line runs (the legend hid it, and its weeks), and one day of drill
attempts was one bar as wide as the whole chart."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest

from studyapp.views import StatsData

from .conftest import screen_lines, settle
from .fake_study import TODAY, FakeStudy

BRAILLE = re.compile("[\u2800-\u28ff]")


class FullRetentionOneDrillDay(FakeStudy):
    """Six weeks in which nothing was forgotten (notes and drills), and drills tried on one day."""

    def drill_retention_by_week(self):
        return tuple((TODAY - timedelta(weeks=5 - i), 1.0) for i in range(6))

    def stats(self) -> StatsData:
        stats = super().stats()
        return StatsData(heatmap=stats.heatmap, forecast=stats.forecast, retention=stats.retention,
                         retention_by_week=tuple((TODAY - timedelta(weeks=5 - i), 1.0) for i in range(6)),
                         mastery_by_tag=stats.mastery_by_tag, drill_history=((TODAY, 1, 2),))


async def stats_screen(ctx, tmp_path, pilot) -> None:
    await settle(pilot)
    await pilot.press("S")
    await settle(pilot)


def plot_rows(app, selector: str) -> list[str]:
    """The rows inside the plot's frame (between ┌ and └), as the screen shows them."""
    lines = screen_lines(app, app.screen.query_one(selector).region)
    top = next(i for i, line in enumerate(lines) if "┌" in line)
    bottom = next(i for i, line in enumerate(lines) if "└" in line)
    return lines[top + 1:bottom]


def box_lines(app, selector: str) -> list[str]:
    """The box's rows as the screen shows them, its border and title left out."""
    return screen_lines(app, app.screen.query_one(selector).region)[1:-1]


def canvas(row: str) -> str:
    """A plot row's canvas: what lies between the y axis (┤ or │) and the frame's right side."""
    axis = re.search("[┤│]", row)
    assert axis is not None, row
    return row[axis.end():row.rindex("│")]


@pytest.mark.parametrize("size", [(100, 40), (80, 24)])
async def test_the_retention_legend_leaves_the_100_percent_line_drawn(ctx, tmp_path, size):
    from studyapp.tui.app import StudyApp

    app = StudyApp(ctx, study=FullRetentionOneDrillDay(tmp_path / "workspace"))
    async with app.run_test(size=size) as pilot:
        await stats_screen(ctx, tmp_path, pilot)
        app.screen.query_one("#retention-box").scroll_visible(animate=False)
        await settle(pilot)
        rows = plot_rows(app, "#retention")
        assert not any("notes" in row or "drills" in row for row in rows), rows  # no legend over the data
        top = canvas(next(row for row in rows if row.lstrip().startswith("100")))
        assert len(BRAILLE.findall(top)) >= 0.8 * len(top.strip() or top), rows  # the line across every week
        legend = [line for line in box_lines(app, "#retention-box") if "notes" in line and "drills" in line]
        assert legend, box_lines(app, "#retention-box")  # still said, outside the plot


@pytest.mark.parametrize("size", [(100, 40), (80, 24)])
async def test_one_day_of_drill_attempts_is_a_narrow_bar(ctx, tmp_path, size):
    from studyapp.tui.app import StudyApp

    app = StudyApp(ctx, study=FullRetentionOneDrillDay(tmp_path / "workspace"))
    async with app.run_test(size=size) as pilot:
        await stats_screen(ctx, tmp_path, pilot)
        app.screen.query_one("#drill-history-box").scroll_visible(animate=False)
        await settle(pilot)
        rows = plot_rows(app, "#drill-history")
        widest = max(len(run) for row in rows for run in re.findall("█+", canvas(row)))
        assert 1 <= widest <= len(canvas(rows[0])) // 4, rows
        assert not any("passed" in row for row in rows), rows  # no legend over the bar
        legend = [line for line in box_lines(app, "#drill-history-box") if "not passed" in line]
        assert legend, box_lines(app, "#drill-history-box")
