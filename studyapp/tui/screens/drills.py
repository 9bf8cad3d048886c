"""The drill list: status and last result of each; Enter opens one."""

from __future__ import annotations

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.coordinate import Coordinate
from textual.widgets import DataTable, Header, ProgressBar, Static
from textual.widgets.data_table import RowKey

from studyapp.tui.messages import DrillsListed
from studyapp.tui.screens.base import StudyScreen
from studyapp.tui.widgets.footer import KeysFooter

STATUS_STYLE = {"passed": "[green]✔ passed[/]", "failing": "[red]✘ failing[/]"}


class DrillsScreen(StudyScreen):
    BINDINGS = [Binding("enter", "open", "Open drill"), Binding("r", "app.start_review", "Review")]

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static("Drills: write the kernel, run the grader, read the checks.", id="drills-hint")
        with Horizontal(id="drills-progress-row"):
            yield ProgressBar(total=1, show_eta=False, show_percentage=False, id="drills-progress")
            yield Static("", id="drills-progress-label")
        table: DataTable[str | Text] = DataTable(id="drill-table", cursor_type="row", zebra_stripes=True)
        table.add_columns("Drill", "Status", "Next due", "Passes", "Last result", "Tags")
        yield table
        yield KeysFooter()

    def refresh_data(self) -> None:
        self.list_drills()

    @work(thread=True, exclusive=True, exit_on_error=False, group="drills")
    def list_drills(self) -> None:
        self.post_message(DrillsListed(self.study.drills(), self.study.drill_progress()))

    def on_drills_listed(self, message: DrillsListed) -> None:
        table = self.query_one(DataTable)
        selected = table.cursor_row
        table.clear()
        progress = {p.id: p for p in message.progress}
        passed = sum(1 for drill in message.drills if drill.status == "passed")
        bar = self.query_one("#drills-progress", ProgressBar)
        bar.update(total=max(len(message.drills), 1), progress=passed)
        self.query_one("#drills-progress-label", Static).update(
            f" {passed} of {len(message.drills)} drills passed")
        for drill in message.drills:
            review = progress.get(drill.id)
            table.add_row(
                Text(drill.title),
                STATUS_STYLE.get(drill.status, "[dim]not started[/]"),
                _next_due(review),
                Text(f"{review.passes}/{review.attempts}" if review else "0/0"),
                Text(_shorten(drill.last_result or "", 40)),
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


def _shorten(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"
