"""Progress as pictures: review calendar, 30-day forecast, retention, mastery, drill history."""

from __future__ import annotations

from datetime import datetime

from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.widgets import Header, Static
from textual.worker import Worker, WorkerState
from textual_plotext import PlotextPlot

from studyapp.today_snapshot import next_midnight
from studyapp.tui.messages import DrillRetentionComputed, StatsComputed
from studyapp.tui.screens.base import StudyScreen
from studyapp.tui.widgets.bars import MasteryBars
from studyapp.tui.widgets.footer import KeysFooter
from studyapp.tui.widgets.heatmap import Heatmap
from studyapp.views import StatsData

COLORS = {"notes": (88, 145, 230), "drills": (236, 150, 40), "passed": (80, 180, 90), "not passed": (220, 80, 80)}
"""Each series' colour, in its chart and in the legend under it (plotext wrote its legend into
the plot's top-left corner, over the retention chart's 100 % line and the first day's bar)."""
DAY_SLOTS = 7
"""The drill chart has room for at least this many days: one day's bar took its whole width."""


def legend(mark: str, *names: str) -> str:
    """A legend line: each name after a mark in its series' colour."""
    return "   ".join(f"[rgb{COLORS[name]}]{mark}[/] {name}" for name in names)


def _box(widget_id: str, title: str, *children, classes: str = "box") -> Vertical:
    box = Vertical(*children, id=widget_id, classes=classes)
    box.border_title = title
    return box


class StatsScreen(StudyScreen):
    BINDINGS = [Binding("r", "app.start_review", "Review")]

    def __init__(self) -> None:
        super().__init__()
        self.stats: StatsData | None = None
        self.drill_weeks: tuple = ()
        """The drills' weekly retention, plotted with the notes' (`DrillRetentionComputed`)."""

    def compose(self) -> ComposeResult:
        yield Header()
        with VerticalScroll(id="stats"):
            yield _box("stats-heatmap-box", "Reviews per day", Heatmap(id="stats-heatmap"))
            with Horizontal(classes="stats-row"):
                yield _box("forecast-box", "Due in the next 30 days", PlotextPlot(id="forecast"))
                yield _box(
                    "retention-box",
                    "Retention (reviews not forgotten): notes and drills",
                    Static("…", id="retention-figures"),
                    PlotextPlot(id="retention"),
                    Static("", id="retention-legend", classes="legend"),
                )
            with Horizontal(classes="stats-row"):
                yield _box("stats-mastery-box", "Mastery by tag", MasteryBars(id="stats-mastery"))
                yield _box("drill-history-box", "Drill attempts", PlotextPlot(id="drill-history"),
                           Static("", id="drill-legend", classes="legend"))
        yield KeysFooter()

    fresh_between: tuple[datetime, datetime] | None = None
    """(computed at, the next midnight): the calendar and the forecast are by day, so they are
    computed again on a new day (`StudyApp.check_the_clock`). None while computing."""

    def refresh_data(self) -> None:
        self.fresh_between = None
        self.compute_stats()

    @work(thread=True, exclusive=True, exit_on_error=False, group="stats")
    def compute_stats(self) -> tuple[datetime, datetime]:
        since = self.app.ctx.now()
        self.post_message(StatsComputed(self.study.stats()))
        self.post_message(DrillRetentionComputed(self.study.drill_retention_by_week()))
        return since, next_midnight(since)

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        super().on_worker_state_changed(event)
        if event.worker.group == "stats" and event.state == WorkerState.SUCCESS:
            self.fresh_between = event.worker.result

    def on_drill_retention_computed(self, message: DrillRetentionComputed) -> None:
        self.drill_weeks = message.weeks
        if self.stats is not None:
            self._plot_retention(self.stats)

    def on_stats_computed(self, message: StatsComputed) -> None:
        stats = self.stats = message.stats
        self.query_one("#stats-heatmap", Heatmap).set_data(stats.heatmap, self.app.ctx.today())
        self._plot_forecast(stats)
        self._plot_retention(stats)
        self.query_one("#stats-mastery", MasteryBars).rows = stats.mastery_by_tag
        self._plot_drills(stats)

    def _plot_forecast(self, stats: StatsData) -> None:
        plot = self.query_one("#forecast", PlotextPlot)
        plt = plot.plt
        plt.clear_data()
        plt.clear_figure()
        days = list(range(len(stats.forecast)))
        counts = [n for _, n in stats.forecast]
        plt.bar(days, counts, marker="hd", width=0.6)
        plt.yticks(whole_ticks(max(counts, default=0)))
        plt.xticks([0, 7, 14, 21, 28], ["today", "+7d", "+14d", "+21d", "+28d"])
        plot.refresh()

    def _plot_retention(self, stats: StatsData) -> None:
        figures = "   ".join(
            f"{label}: [b]{value:.0%}[/b]" if value is not None else f"{label}: –"
            for label, value in stats.retention
        )
        self.query_one("#retention-figures", Static).update(figures)
        plot = self.query_one("#retention", PlotextPlot)
        plt = plot.plt
        plt.clear_data()
        plt.clear_figure()
        notes, drills = dict(stats.retention_by_week), dict(self.drill_weeks)
        drawn = [(label, series) for label, series in (("notes", notes), ("drills", drills)) if series]
        if drawn:
            weeks = sorted(notes.keys() | drills.keys())
            where = {week: float(i) for i, week in enumerate(weeks)}
            for label, series in drawn:
                plt.plot([where[w] for w in sorted(series)], [series[w] * 100 for w in sorted(series)],
                         marker="braille", color=COLORS[label])
            plt.ylim(0, 100)
            plt.xticks(list(where.values()), [d.strftime("%m-%d") for d in weeks])
        else:
            plt.title("no reviews of graduated notes or drills yet")
        self.query_one("#retention-legend", Static).update(legend("━━", *(label for label, _ in drawn)))
        plot.refresh()

    def _plot_drills(self, stats: StatsData) -> None:
        plot = self.query_one("#drill-history", PlotextPlot)
        plt = plot.plt
        plt.clear_data()
        plt.clear_figure()
        history = stats.drill_history
        if history:
            days = [float(i) for i in range(len(history))]  # places, not dates: only the days with attempts
            # plotext's stubs lag its code: stacked_bar takes one colour per series
            plt.stacked_bar(days, [[p for _, p, _ in history], [f for _, _, f in history]], width=0.5,
                            color=[COLORS["passed"], COLORS["not passed"]])  # type: ignore[arg-type]
            plt.xlim(-0.5, max(len(history), DAY_SLOTS) - 0.5)
            plt.xticks(days, [d.strftime("%m-%d") for d, _, _ in history])
            plt.yticks(whole_ticks(max(p + f for _, p, f in history)))  # not 0.50, 1.50...
        else:
            plt.title("no attempts yet")
        self.query_one("#drill-legend", Static).update(legend("██", "passed", "not passed") if history else "")
        plot.refresh()


def whole_ticks(top: int) -> list[float]:
    """At most five whole-number ticks from 0 up to at least `top`: counts come whole."""
    step = max(1, -(-top // 4))
    ticks: list[float] = list(range(0, top + step, step))  # ints, drawn without decimals
    return ticks
