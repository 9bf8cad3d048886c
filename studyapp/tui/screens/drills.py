"""The drill list: status and last result of each; Enter opens one."""

from __future__ import annotations

from datetime import datetime

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.coordinate import Coordinate
from textual.widgets import DataTable, Header, ProgressBar, Static
from textual.widgets.data_table import ColumnKey, RowKey
from textual.worker import Worker, WorkerState

from studyapp.textwidth import display_width, fit, printable
from studyapp.today_snapshot import next_midnight
from studyapp.tui.messages import DrillsListed
from studyapp.tui.screens.base import StudyScreen
from studyapp.tui.widgets.footer import KeysFooter

STATUS_STYLE = {"passed": "[green]✔ passed[/]", "failing": "[red]✘ failing[/]"}
STATUS_COLUMNS = (("Status", len("not started")), ("Next due", len("2026-11-24")))
"""The columns always in view, each as wide as its widest value (and Passes, as wide as the
widest count listed)."""
MIN_TITLE = 16
"""A title or a last result is never shortened below this many cells, however narrow the terminal."""


class DrillsScreen(StudyScreen):
    BINDINGS = [
        Binding("enter", "open", "Open drill", show=False),
        Binding("o", "open", "Open"),
        Binding("r", "app.start_review", "Review"),
    ]
    """The table's own Enter (hidden) shadows the screen's in the footer, which then named no
    way to open a drill: `o` is shown, as on the Notes screen, and Enter still opens."""
    _listed: DrillsListed | None = None
    """The last listing, drawn again when the terminal's width changes."""

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static("Drills: write the kernel, run the grader, read the checks.", id="drills-hint")
        with Horizontal(id="drills-progress-row"):
            yield ProgressBar(total=1, show_eta=False, show_percentage=False, id="drills-progress")
            yield Static("", id="drills-progress-label")
        table: DataTable[str | Text] = DataTable(id="drill-table", cursor_type="row", zebra_stripes=True)
        table.add_column("Drill", key="title")
        for label, width in STATUS_COLUMNS:
            table.add_column(label, width=width)
        table.add_column("Passes", key="passes")
        table.add_column("Last result", key="last")
        table.add_column("Tags", key="tags")
        yield table
        yield KeysFooter()

    fresh_between: tuple[datetime, datetime] | None = None
    """(listed at, valid until): "due now" and the dates stay right while the clock is in it
    (`StudyApp.check_the_clock`). None while listing."""

    def refresh_data(self) -> None:
        self.fresh_between = None
        self.list_drills()

    @work(thread=True, exclusive=True, exit_on_error=False, group="drills")
    def list_drills(self) -> tuple[datetime, datetime]:
        """List the drills; returns the span in which the list stays right (`fresh_between`)."""
        since = self.app.ctx.now()
        self.post_message(DrillsListed(self.study.drills(), self.study.drill_progress()))
        valid_until = getattr(self.study, "drills_valid_until", None)
        return since, valid_until() if valid_until is not None else next_midnight(since)

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        super().on_worker_state_changed(event)
        if event.worker.group == "drills" and event.state == WorkerState.SUCCESS:
            self.fresh_between = event.worker.result

    def on_drills_listed(self, message: DrillsListed) -> None:
        self._listed = message
        self._fill(message)

    def on_resize(self) -> None:
        if self._listed is not None:
            self._fill(self._listed)

    def _widths(self, table: DataTable, titles: list[str], passes: list[str], results: list[str]) -> tuple[int, int, int]:
        """Cells for the title, the passes and the last result: what the status columns leave
        (which must stay in view). The title took all of it at 80 and 100 columns and the last
        result was off the screen: when both do not fit, the result gets at least half."""
        shown = table.scrollable_content_region.width or self.app.size.width
        padding = 2 * table.cell_padding
        passes_width = max(map(display_width, ["Passes", *passes]))
        room = shown - sum(width + padding for _, width in STATUS_COLUMNS) - passes_width - 3 * padding
        widest_title = max((display_width(title) for title in titles), default=MIN_TITLE)
        widest_result = max(map(display_width, ["Last result", *results]))
        if widest_title + widest_result <= room:
            return widest_title, passes_width, widest_result
        result = min(widest_result, max(MIN_TITLE, room - min(widest_title, room // 2)))
        return max(MIN_TITLE, min(widest_title, room - result)), passes_width, result

    def _fill(self, message: DrillsListed) -> None:
        table = self.query_one(DataTable)
        selected = table.cursor_row
        table.clear()
        progress = {p.id: p for p in message.progress}
        reviews = [progress.get(drill.id) for drill in message.drills]
        passes = [f"{review.passes}/{review.attempts}" if review else "0/0" for review in reviews]
        results = [printable(drill.last_result or "") for drill in message.drills]
        widths = self._widths(table, [drill.title for drill in message.drills], passes, results)
        for key, width in zip(("title", "passes", "last"), widths):
            column = table.columns[ColumnKey(key)]
            column.auto_width, column.width = False, width
        title_width, _, result_width = widths
        passed = sum(1 for drill in message.drills if drill.status == "passed")
        bar = self.query_one("#drills-progress", ProgressBar)
        bar.update(total=max(len(message.drills), 1), progress=passed)
        self.query_one("#drills-progress-label", Static).update(
            f" {passed} of {len(message.drills)} drills passed")
        for drill, review, count, result in zip(message.drills, reviews, passes, results):
            table.add_row(
                Text(fit(drill.title, title_width).rstrip()),
                STATUS_STYLE.get(drill.status, "[dim]not started[/]"),
                _next_due(review),
                Text(count),
                Text(fit(result, result_width).rstrip()),
                Text(", ".join(drill.tags)),
                key=drill.id,
            )
        if message.drills:
            table.move_cursor(row=min(selected, len(message.drills) - 1))

    def action_open(self) -> None:
        table = self.query_one(DataTable)
        if table.row_count == 0:
            return
        row_key, _ = table.coordinate_to_cell_key(Coordinate(table.cursor_row, 0))
        self._open_row(row_key)

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        self._open_row(event.row_key)

    def _open_row(self, row_key: RowKey) -> None:
        assert row_key.value is not None, "every row is added with key=drill.id"
        self.app.action_open_drill(row_key.value)


def _next_due(review) -> str:
    """"due now" (highlighted), the next due date, or "–" for a drill not introduced yet."""
    if review is None or review.next_due is None:
        return "[dim]–[/]"
    return "[b $warning]due now[/]" if review.due_now else review.next_due.isoformat()

