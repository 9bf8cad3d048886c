"""One drill: statement, an editor on the learner's workspace file, and a graded run."""

from __future__ import annotations

from pathlib import Path

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.markup import escape
from textual.widgets import DataTable, Footer, Header, LoadingIndicator, Markdown, Static, TextArea

from studyapp.views import DrillDetail
from studyapp.tui.editor import edit_file
from studyapp.tui.messages import GradeFinished
from studyapp.tui.screens.base import StudyScreen, footer_hides

CHECK_MARK = {"pass": "[green]✔[/]", "fail": "[red]✘[/]", "skip": "[dim]–[/]"}
STATUS_LINE = {"pass": "[b green]PASS[/]", "fail": "[b red]FAIL[/]", "error": "[b red]ERROR[/]"}
GRADER_FAILURES = ("the grader stopped unexpectedly", "internal grader error")
"""Summaries the grader gives when it failed itself (not the learner's code): also notified."""


class DrillScreen(StudyScreen):
    """Edit and grade one drill; the grader runs in its own process, the UI stays live."""

    BINDINGS = [
        Binding("ctrl+r", "run", "Run grader", priority=True),
        Binding("ctrl+s", "save", "Save", priority=True),
        Binding("f4", "edit", "$EDITOR"),
        Binding("e", "edit", "$EDITOR", show=False),
        Binding("escape", "leave", "Back"),
        *footer_hides("today", "drills", "notes", "stats"),
    ]

    def __init__(self, drill_id: str) -> None:
        super().__init__()
        self.drill_id = drill_id
        self.detail: DrillDetail | None = None
        self.saved_text = ""
        self.file_mtime_ns = 0
        self.grading = False

    def compose(self) -> ComposeResult:
        yield Header()
        with Horizontal(id="drill"):
            with VerticalScroll(id="statement-box", classes="box") as box:
                box.border_title = "Task"
                yield Markdown("", id="statement")
            with Vertical(id="work"):
                yield TextArea.code_editor("", language="python", id="code", soft_wrap=False)
                with Horizontal(id="grade-status-row"):
                    yield LoadingIndicator(id="grading-spinner")
                    yield Static("ctrl+r runs the grader.", id="grade-status")
                with VerticalScroll(id="result-box"):
                    table = DataTable(id="checks", cursor_type="none", show_cursor=False)
                    table.add_columns("", "Check", "Message")
                    yield table
                    yield Static("", id="hint")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#grading-spinner").display = False
        try:
            self.detail = self.session.open_drill(self.drill_id)
        except Exception as exc:  # noqa: BLE001 - unknown drill, unwritable workspace
            self.app.report_error(exc, title="Could not open the drill")
            self.app.pop_screen()
            return
        self.sub_title = self.detail.title
        self.query_one("#statement", Markdown).update(self.detail.statement)
        self._load_file()
        self.set_interval(1.0, self._poll_file, name="watch workspace file")

    @property
    def path(self) -> Path:
        assert self.detail is not None
        return self.detail.workspace_file

    def _load_file(self) -> None:
        text = self.path.read_text(encoding="utf-8")
        self.saved_text = text
        self.file_mtime_ns = self.path.stat().st_mtime_ns
        self.query_one("#code", TextArea).load_text(text)

    def _poll_file(self) -> None:
        """A save from outside (another editor) reloads the file and re-grades it."""
        if self.detail is None:
            return
        try:
            mtime = self.path.stat().st_mtime_ns
        except FileNotFoundError:
            return
        if mtime == self.file_mtime_ns:
            return
        text = self.path.read_text(encoding="utf-8")
        self.file_mtime_ns = mtime
        if text == self.saved_text:
            return
        if self.query_one("#code", TextArea).text != self.saved_text:
            self.notify("The file changed on disk; your unsaved edits here were replaced.", severity="warning")
        self._load_file()
        self.action_run(save=False)

    def action_save(self) -> bool:
        text = self.query_one("#code", TextArea).text
        if text == self.saved_text:
            return True
        try:
            self.session.save_drill_file(self.path, text)
        except Exception as exc:  # noqa: BLE001
            self.app.report_error(exc, title="Could not save")
            return False
        self.saved_text = text
        self.file_mtime_ns = self.path.stat().st_mtime_ns
        return True

    def action_run(self, save: bool = True) -> None:
        if save and not self.action_save():
            return
        if self.grading:
            self.session.cancel_grade()  # the newer run replaces the one in flight
        self.grading = True
        self.query_one("#grading-spinner").display = True
        self.query_one("#grade-status", Static).update("Grading…  (ctrl+r again restarts)")
        self.grade()

    @work(thread=True, exclusive=True, exit_on_error=False, group="grade")
    def grade(self) -> None:
        from textual.worker import get_current_worker

        verdict = self.session.grade(self.drill_id, self.path)
        if not get_current_worker().is_cancelled:
            self.post_message(GradeFinished(verdict))

    def on_grade_finished(self, message: GradeFinished) -> None:
        self.grading = False
        self.query_one("#grading-spinner").display = False
        verdict = message.verdict
        status = verdict.get("status", "error")
        seconds = verdict.get("seconds")
        timing = f"  [dim]{seconds:.2f}s[/]" if isinstance(seconds, (int, float)) else ""
        self.query_one("#grade-status", Static).update(
            f"{STATUS_LINE.get(status, escape(status))} {escape(verdict.get('summary', ''))}{timing}"
        )
        table = self.query_one("#checks", DataTable)
        table.clear()
        for check in verdict.get("checks", []):
            table.add_row(
                CHECK_MARK.get(check.get("status"), "?"),
                Text(str(check.get("name", ""))),
                Text(str(check.get("message", ""))),
            )
        parts = []
        if verdict.get("hint"):
            parts.append(f"[b]Hint:[/b] {escape(verdict['hint'])}")
        if verdict.get("detail"):
            parts.append(escape(verdict["detail"]))
        if verdict.get("output"):
            parts.append("[b]Output:[/b]\n" + escape(verdict["output"]))
        self.query_one("#hint", Static).update("\n\n".join(parts))
        if status == "error" and verdict.get("summary") in GRADER_FAILURES:
            self.notify(f"{verdict['summary']}: {verdict.get('detail', '')[-300:]}", title="Grader", severity="error")

    def on_worker_state_changed(self, event) -> None:
        from textual.worker import WorkerState

        if event.worker.group == "grade" and event.state == WorkerState.ERROR:
            self.grading = False
            self.query_one("#grading-spinner").display = False
            self.query_one("#grade-status", Static).update("[b red]The grader failed; see the notification.[/]")

    def action_edit(self) -> None:
        if self.detail is None or not self.action_save():
            return
        if edit_file(self.app, self.path):
            self._poll_file()

    def action_leave(self) -> None:
        if self.query_one("#code", TextArea).text != self.saved_text:
            self.action_save()
            self.notify("Saved your drill file.", timeout=2)
        if self.grading:
            self.session.cancel_grade()
        self.app.pop_screen()
