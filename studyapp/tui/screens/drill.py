"""One drill: statement, an editor on the learner's workspace file, and a graded run.

Past 400 lines because the screen is one state machine a learner drives with keys: the
editor and its saves (never losing an edit made elsewhere), the run and its cancellation, the
verdict, and the drill as a review item (hints, give-up, the proposed rating and the
reference). Each part is short; splitting them would spread that one state over widgets."""

from __future__ import annotations

import ast
import time
from collections.abc import Callable
from pathlib import Path

from rich.text import Text
from textual import events, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.widgets import DataTable, Header, LoadingIndicator, Markdown, Static, TextArea

from studyapp.grader.contract import FailureOrigin
from studyapp.textwidth import printable
from studyapp.tui.editor import edit_file
from studyapp.tui.markup import plain
from studyapp.tui.messages import GradeFinished
from studyapp.tui.screens.base import StudyScreen, footer_hides
from studyapp.tui.screens.confirm import Confirm
from studyapp.tui.widgets.code_editor import CodeEditor
from studyapp.tui.widgets.footer import KeysFooter
from studyapp.views import DrillDetail

CHECK_MARK = {"pass": "[green]✔[/]", "fail": "[red]✘[/]", "skip": "[dim]–[/]"}
STATUS_LINE = {"pass": "[b green]PASS[/]", "fail": "[b red]FAIL[/]", "error": "[b red]ERROR[/]"}
READY_LINE = "ctrl+r runs the grader · F2 a hint · F3 give up"
SAVED_ELSEWHERE = "saved by another program since it was read here"
"""`DrillScreen.save`'s answer when it asked which version stays instead of writing."""
"""The line under the editor before the first run, while the try is open."""
LOOKS_LIKE = " (looks like: "
"""How a summary names the known mistake; shown on its own line, the verdict's key line."""


def first_code_line(text: str) -> int:
    """The line to put the cursor on when a drill opens: the first statement of the first
    function (the starter's `raise NotImplementedError`), else the line after the module
    docstring, so a small terminal shows code rather than the docstring."""
    try:
        module = ast.parse(text)
    except SyntaxError:
        return 0
    for node in module.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            return node.body[-1].lineno - 1
    if module.body and isinstance(module.body[0], ast.Expr) and isinstance(
            getattr(module.body[0], "value", None), ast.Constant):
        return module.body[0].end_lineno or 0
    return 0


def summary_markup(verdict: dict) -> str:
    """Status and summary, with the known mistake ("looks like: …") on a line of its own."""
    status = verdict.get("status", "error")
    summary = verdict.get("summary", "")
    head, sep, mistake = summary.partition(LOOKS_LIKE)
    text = f"{STATUS_LINE.get(status, plain(status))} {plain(head)}"
    if sep:
        text += f"\n[b]Looks like:[/b] {plain(mistake.removesuffix(')'))}"
    seconds = verdict.get("seconds")
    if isinstance(seconds, (int, float)):
        text += f"  [dim]{seconds:.2f}s[/]"
    if verdict.get("attempted_at"):
        text += f"  [dim](last run {plain(str(verdict['attempted_at']))})[/]"
    if verdict.get("same_run"):  # `facade.grade`: the drill's last run graded again
        text += "\n[dim](the same code as your last run: not counted again)[/]"
    return text


def hint_markup(hint) -> str:
    """One rung of the hint ladder as the task pane shows it."""
    return f"[b]Hint {hint.number}/{hint.of}:[/b] {plain(hint.text)}"


RATED_ELSEWHERE = "This try was rated elsewhere meanwhile: nothing recorded here."
NEWER_TRY = ("The try graded here no longer waits for a rating: a newer try of this drill was made "
             "elsewhere. Nothing recorded here.")


class DrillScreen(StudyScreen):
    """Edit and grade one drill; the grader runs in its own process, the UI stays live.

    The editor has the focus from the start, so typed code never reaches a screen key; F6 or
    ctrl+o moves on to the results and the task, which scroll by keyboard, and back.
    """

    AUTO_FOCUS = "#code"
    BINDINGS = [
        Binding("ctrl+r", "run", "Run grader", priority=True),
        Binding("ctrl+s", "save_file", "Save", priority=True),
        Binding("f6", "switch_pane", "Focus", priority=True),
        Binding("ctrl+o", "switch_pane", "Focus", show=False, priority=True),
        Binding("1", "rate_drill(1)", "Again", show=False),
        Binding("2", "rate_drill(2)", "Hard", show=False),
        Binding("3", "rate_drill(3)", "Good", show=False),
        Binding("4", "rate_drill(4)", "Easy", show=False),
        Binding("f4", "edit", "$EDITOR"),
        Binding("e", "edit", "$EDITOR", show=False),
        Binding("escape", "leave", "Back", priority=True),
        Binding("enter", "rate_drill", "Accept"),
        Binding("f2", "hint", "Hint", show=False, priority=True),
        Binding("h", "hint", "Hint", show=False),
        Binding("f3", "give_up", "Give up", show=False, priority=True),
        Binding("g", "give_up", "Give up", show=False),
        *footer_hides("today", "drills", "notes", "stats"),
    ]

    def __init__(self, drill_id: str) -> None:
        super().__init__()
        self.drill_id = drill_id
        self.detail: DrillDetail | None = None
        self.open_error: Exception | None = None
        self.saved_text = ""
        self.file_mtime_ns = 0
        self.grading = False
        self.asking = False
        """A question about the file is on screen; the watcher waits for the answer."""
        self.proposal = None
        """The rating the try earned (`drill_reviews.Proposal`), once it passed or was given up."""
        self.results_take_keys = False
        """A confirmed give-up sent the focus to the results (it lands after a redraw or two)."""
        self.backup: Path | None = None
        """Where the learner's previous file went when the drill came back due (fresh starter)."""
        self._unreadable_said = False
        self.text_at_run: str | None = None
        """The editor's text when the latest run (or give-up) began: typed on since, the learner
        is busy in the editor, and the rating that run earns does not take the focus away."""

    def compose(self) -> ComposeResult:
        # Opened here, not on mount, so the editor holds the file before the first key arrives.
        text = ""
        try:
            _, self.backup = self.study.begin_drill_review(self.drill_id)
            self.detail = self.study.open_drill(self.drill_id)
            text = self.path.read_text(encoding="utf-8")
            self.saved_text = text
            self.file_mtime_ns = self.path.stat().st_mtime_ns
        except Exception as exc:  # noqa: BLE001 - unknown drill, unwritable workspace
            self.open_error = exc
        yield Header()
        with Horizontal(id="drill"):
            with VerticalScroll(id="statement-box", classes="box") as box:
                box.border_title = "Task"
                yield Markdown("", id="statement")
                yield Static("", id="drill-hints")
            with Vertical(id="work"):
                # plain text until mounted: a language given here is parsed twice (Textual's
                # constructor, then its language watcher), 25 ms of tree-sitter each
                yield CodeEditor.code_editor(text, id="code", soft_wrap=False)
                with Horizontal(id="grade-status-row"):
                    yield LoadingIndicator(id="grading-spinner")
                    yield Static(READY_LINE, id="grade-status")
                with VerticalScroll(id="result-box") as results:
                    results.border_title = "Result"
                    yield Static("", id="drill-proposal")
                    yield Static("", id="verdict-summary")
                    yield Static("", id="hint")
                    table: DataTable[str | Text] = DataTable(id="checks", cursor_type="none", show_cursor=False)
                    table.can_focus = False  # the box scrolls; the table has nothing to select
                    table.add_columns("", "Check", "Message")
                    yield table
                    yield Static("", id="detail")
                    yield Static("[b]Reference solution[/b]", id="reference-label")
                    yield Static("", id="reference")
        yield KeysFooter()

    def on_mount(self) -> None:
        self.query_one("#grading-spinner").display = False
        if self.open_error is not None or self.detail is None:
            self.app.report_error(self.open_error or RuntimeError("no drill"), title="Could not open the drill")
            self.app.pop_screen()
            return
        self.sub_title = self.detail.title
        self.query_one("#statement", Markdown).update(self.detail.statement)
        self.query_one("#result-box").display = False
        for part in ("#verdict-summary", "#hint", "#checks", "#detail"):  # until a run: a give-up
            self.query_one(part).display = False  # first showed an empty table and blank lines
        if self.detail.last_verdict and self.backup is None:  # back due, on a fresh starter: the
            self.show_verdict(self.detail.last_verdict)  # last verdict graded the file now in backups/
        self.refresh_review_state(opening=True)
        if self.backup is not None:
            self.notify(f"The drill is due: write it again from memory. Your previous file is kept as "
                        f"{self.backup}.", timeout=6)
        editor = self.query_one("#code", TextArea)
        editor.language = "python"
        editor.move_cursor((first_code_line(editor.text), 0))
        self.call_after_refresh(editor.scroll_cursor_visible, center=True, animate=False)
        self.set_interval(1.0, self._poll_file, name="watch workspace file")
        self.warm_grader()

    @work(thread=True, exclusive=True, exit_on_error=False, group="grader-warm", name="Preparing the grader")
    def warm_grader(self) -> None:
        """While the learner reads the task, the grader prepares this drill (issue 17)."""
        warm = getattr(self.study, "warm_grader", None)
        if warm is not None and self.detail is not None:
            warm(self.detail.id)

    @property
    def path(self) -> Path:
        assert self.detail is not None
        return self.detail.workspace_file

    @property
    def unsaved(self) -> bool:
        return self.detail is not None and self.query_one("#code", TextArea).text != self.saved_text

    def on_key(self, event: events.Key) -> None:
        """A character that reaches the screen before anything has focus belongs in the editor."""
        if self.focused is None and event.is_printable and event.character:
            event.stop()
            editor = self.query_one("#code", TextArea)
            editor.focus()
            editor.insert(event.character)

    def _load_file(self) -> None:
        text = self.path.read_text(encoding="utf-8")
        self.saved_text = text
        self.file_mtime_ns = self.path.stat().st_mtime_ns
        self.query_one("#code", TextArea).load_text(text)

    def _poll_file(self) -> None:
        """A save from outside (another editor) reloads the file and re-grades it, but only
        while this screen is the one on view; edits here are never replaced without asking."""
        if self.detail is None or not self.is_active or self.asking:
            return
        try:
            mtime = self.path.stat().st_mtime_ns
        except FileNotFoundError:  # deleted outside (rm, git clean): the code here is all there is
            if self.saved_text:  # said once: nothing is saved now, so leaving, ctrl+s or ctrl+r writes it back
                self.saved_text = ""
                self.notify(f"{self.path.name} was deleted outside the app: your code here is kept; "
                            "ctrl+s (or leaving) writes it back.", severity="warning", timeout=8)
            return
        except OSError as exc:  # the workspace folder replaced by a file, unreadable...
            self._cannot_read(exc.strerror or str(exc), None)
            return
        if mtime == self.file_mtime_ns:
            return
        try:
            text = self.path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:  # e.g. a Latin-1 editor saved it
            self._cannot_read(_unreadable(exc), mtime)
            return
        if text == self.saved_text:
            self.file_mtime_ns = mtime
            return
        if self.unsaved:  # that save counts as seen once answered: a question closed unanswered
            self._ask_which_version(text, mtime)  # (ctrl+q over it) is asked again by the save
            return
        self.file_mtime_ns = mtime
        self._load_file()
        self.action_run(save=False)

    def _cannot_read(self, reason: str, mtime: int | None) -> None:
        """Another program left the drill's file unreadable: said once (per saved version), and
        the code in the editor stays; leaving or ctrl+s writes it back over the file."""
        if mtime is not None:
            self.file_mtime_ns = mtime
        elif self._unreadable_said:
            return
        self._unreadable_said = True
        self.notify(f"{self.path.name} was changed outside and cannot be read ({reason}): your code "
                    "here is kept; ctrl+s saves it over the file.", severity="warning", timeout=8)

    def _ask_which_version(self, disk_text: str, mtime: int,
                           then: Callable[[], object] | None = None) -> None:
        """Another program saved the file while there are unsaved edits here: which one stays.
        Keeping the edits (or Esc) first copies the other program's version into backups/, so
        neither is lost (a copy that fails writes nothing), then goes on with `then` (the save,
        run or leave that found it), which writes them over the file; else they are saved by
        the next ctrl+s."""
        def answered(load_disk: bool | None) -> None:
            self.asking = False
            if load_disk:
                try:
                    self._load_file()
                except (OSError, UnicodeDecodeError) as exc:  # deleted, or saved again unreadable, meanwhile
                    self._unreadable_said = False
                    self._cannot_read(_unreadable(exc), None)  # the code in the editor stays
                    return
                self.action_run(save=False)
                return
            try:
                kept = self.study.keep_workspace_copy(self.path)
            except Exception as exc:  # noqa: BLE001 - a full disk, backups/ not a folder: nothing is written
                self.notify(f"Their version could not be copied to backups/ ({exc}), so yours is not "
                            "written over it: your edits stay here, unsaved.", severity="error", timeout=10)
                return
            # the version just copied (a save made while the question was up is the one on disk)
            seen_text, seen_mtime = self._disk_version() or (disk_text, mtime)
            self.saved_text = seen_text  # what is on disk now; the next save replaces it
            self.file_mtime_ns = seen_mtime
            where = f" Their version is kept as {kept}." if kept is not None else ""
            if then is not None:
                self.notify(f"Kept your edits.{where}", timeout=6)
                then()
            else:
                self.notify(f"Kept your edits; ctrl+s saves them over the file.{where}", timeout=6)

        self.asking = True
        self.app.push_screen(Confirm(
            f"{self.path.name} was saved by another program while you have unsaved edits here.",
            yes="Load the saved file, drop my edits", no="Keep my edits"), answered)

    def _disk_version(self) -> tuple[str, int] | None:
        """The file's text and mtime now; None when it cannot be read as text."""
        try:
            mtime = self.path.stat().st_mtime_ns
            return self.path.read_text(encoding="utf-8"), mtime
        except (OSError, UnicodeDecodeError):
            return None

    def save(self, then: Callable[[], object] | None = None) -> str | None:
        """Write the editor's text to the workspace file; None when saved, else the reason.

        A file another program saved since it was loaded or saved here (within the second
        before the poll notices) is not written over: the learner is asked which version stays
        (`SAVED_ELSEWHERE`; keeping theirs goes on with `then`)."""
        text = self.query_one("#code", TextArea).text
        if text == self.saved_text and self.path.exists():  # a file deleted outside is written again
            return None
        if (other := self._saved_elsewhere()) is not None:
            if isinstance(other, tuple):
                self._ask_which_version(*other, then=then)
            return SAVED_ELSEWHERE
        try:
            self.study.save_drill_file(self.path, text)
        except Exception as exc:  # noqa: BLE001
            return str(exc) or type(exc).__name__
        self.saved_text = text
        self.file_mtime_ns = self.path.stat().st_mtime_ns
        return None

    def _saved_elsewhere(self) -> tuple[str, int] | bool | None:
        """The file's text and mtime when another program saved it since this screen read or
        wrote it, and it differs from what was read or written (that save counts as seen once
        the learner answers which version stays); True when such a save cannot be read (said,
        as the poll says it: the next save writes over it); else None."""
        try:
            mtime = self.path.stat().st_mtime_ns
        except OSError:  # gone, or the folder unreadable: the write says what is wrong
            return None
        if mtime == self.file_mtime_ns:
            return None
        try:
            text = self.path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            self._unreadable_said = False
            self._cannot_read(_unreadable(exc), mtime)
            return True
        if text == self.saved_text:
            self.file_mtime_ns = mtime
            return None
        return text, mtime

    def action_save(self, then: Callable[[], object] | None = None) -> bool:
        problem = self.save(then)
        if problem is not None and problem is not SAVED_ELSEWHERE:
            self.app.report_error(OSError(problem), title="Could not save")
        return problem is None

    def action_save_file(self) -> None:
        """ctrl+s: save, and say so (it wrote the file silently, and a learner could not tell)."""
        if self.detail is None:
            return
        unchanged = not self.unsaved
        if self.action_save(then=self.action_save_file):
            self.notify(f"{self.path.name} is saved." if unchanged else f"Saved {self.path.name}.", timeout=2)

    def action_run(self, save: bool = True) -> None:
        if save and not self.action_save(then=self.action_run):
            return
        if self.grading:
            self.study.cancel_grade()  # the newer run replaces the one in flight
        self.text_at_run = self.query_one("#code", TextArea).text
        self.grading = True
        self.results_take_keys = False
        self.query_one("#grading-spinner").display = True
        self.query_one("#grade-status", Static).update("Grading…  (ctrl+r again restarts)")
        self.grade()

    @work(thread=True, exclusive=True, exit_on_error=False, group="grade")
    def grade(self) -> None:
        from textual.worker import get_current_worker

        verdict = self.study.grade(self.drill_id, self.path)
        if not get_current_worker().is_cancelled:
            self.post_message(GradeFinished(verdict))

    def on_grade_finished(self, message: GradeFinished) -> None:
        self.grading = False
        self.query_one("#grading-spinner").display = False
        verdict = message.verdict
        self.show_verdict(verdict)
        self.refresh_review_state()
        if verdict.get("origin") == FailureOrigin.GRADER:  # the grader failed, not their code: say so
            self.notify(f"{verdict['summary']}: {verdict.get('detail', '')[-300:]}", title="Grader", severity="error")

    def show_verdict(self, verdict: dict) -> None:
        """Summary and hint first (they say what is wrong), then the checks, then any output."""
        status = verdict.get("status", "error")
        self.query_one("#grade-status", Static).update(
            f"{STATUS_LINE.get(status, plain(status))}  [dim]F6 results · ctrl+r runs again[/]")
        self.query_one("#result-box").display = True
        summary = self.query_one("#verdict-summary", Static)
        summary.update(summary_markup(verdict))
        summary.display = True
        hint = verdict.get("hint")
        hint_widget = self.query_one("#hint", Static)
        hint_widget.update(f"[b]Hint:[/b] {plain(hint)}" if hint else "")
        hint_widget.display = bool(hint)
        table = self.query_one("#checks", DataTable)
        table.clear()
        for check in verdict.get("checks", []):
            table.add_row(
                CHECK_MARK.get(check.get("status"), "?"),
                Text(printable(str(check.get("name", "")))),
                Text(printable(str(check.get("message", "")))),
            )
        table.display = table.row_count > 0
        parts = []
        if verdict.get("detail"):
            parts.append(plain(verdict["detail"]))
        if verdict.get("output"):
            parts.append("[b]Output:[/b]\n" + plain(verdict["output"]))
        detail = self.query_one("#detail", Static)
        detail.update("\n\n".join(parts))
        detail.display = bool(parts)
        self.query_one("#result-box", VerticalScroll).scroll_home(animate=False)
        # the results take room from the editor, which keeps the line being edited in view itself

    def on_worker_state_changed(self, event) -> None:
        from textual.worker import WorkerState

        if event.worker.group == "grade" and event.state == WorkerState.ERROR:
            self.grading = False
            self.query_one("#grading-spinner").display = False
            self.query_one("#grade-status", Static).update("[b red]The grader failed; see the notification.[/]")

    def action_switch_pane(self) -> None:
        """Editor, then the results (once there are some), then the task, then the editor."""
        self.results_take_keys = False
        panes = [self.query_one("#code", TextArea), self.query_one("#result-box"), self.query_one("#statement-box")]
        panes = [pane for pane in panes if pane.display]
        here = panes.index(self.focused) if self.focused in panes else -1
        panes[(here + 1) % len(panes)].focus()

    def action_edit(self) -> None:
        if self.detail is None or not self.action_save():
            return
        if edit_file(self.app, self.path):
            self._poll_file()

    # -- the drill as a review item: hints, give-up, the proposed rating -------------------

    def refresh_data(self) -> None:
        """Another process changed the history (`studyapp rate-drill`, `undo`, a hint): the
        try as it stands now. A proposal shown here whose try was rated elsewhere, or that a
        newer try made elsewhere replaced, is taken away and said, never swapped for another
        under the learner's fingers (a `4` on its way would rate a try never seen)."""
        shown = self.proposal
        if shown is not None:
            now = self.study.drill_proposal(self.drill_id)
            if now is None or now.try_id != shown.try_id:
                self.notify(NEWER_TRY if now is not None else RATED_ELSEWHERE, severity="warning", timeout=8)
                self.proposal = None
                self.query_one("#drill-proposal", Static).display = False
                self.refresh_bindings()  # its Enter and 1-4 leave the footer with it
                return
        self.refresh_review_state()

    def refresh_review_state(self, opening: bool = False, gave_up: bool = False) -> None:
        """Hints shown, the proposed rating and the reference, as the try stands now. The editor
        keeps the focus when a try comes to wait for its rating by a run, or is opening so (typed
        keys are text: the Enter of the next line, or the `1` of `x = 1`, rated the drill and
        closed it); F6 reaches the rating keys. Only a confirmed give-up, whose rating is what
        the learner just chose, moves the focus to the results."""
        hints = self.study.drill_hints_shown(self.drill_id)
        hints_widget = self.query_one("#drill-hints", Static)
        hints_widget.update("\n".join(hint_markup(h) for h in hints))
        hints_widget.display = bool(hints)
        had = self.proposal
        self.proposal = self.study.drill_proposal(self.drill_id)
        proposal_widget = self.query_one("#drill-proposal", Static)
        editor = self.query_one("#code", TextArea)
        typing = opening or (self.focused is editor and self.text_at_run is not None
                             and editor.text != self.text_at_run)
        if self.proposal is None:
            self.results_take_keys = False
        else:
            at_results = self.results_take_keys or self.focused is self.query_one("#result-box")
            first = "F6 (to the results), then " if not at_results and (typing or self.focused is editor) else ""
            proposal_widget.update(
                f"[b]Proposed rating: {self.proposal.label}[/b] ({plain(self.proposal.reason)})\n"
                f"[dim]{first}Enter records it, or a key from 1 (Again) to 4 (Easy) records another[/]")
            self.query_one("#result-box").display = True
        proposal_widget.display = self.proposal is not None
        reference = self.study.drill_reference(self.drill_id)
        reference_widget = self.query_one("#reference", Static)
        if reference:
            from rich.syntax import Syntax

            reference_widget.update(Syntax(reference, "python", line_numbers=False, word_wrap=True))
        reference_widget.display = bool(reference)
        self.query_one("#reference-label").display = bool(reference)
        if reference:  # given up on a drill not due: no run, no rating, and the reference to read
            self.query_one("#result-box").display = True
        if self.proposal is not None and had is None:
            status = self.query_one("#grade-status", Static)
            if str(status.render()) == READY_LINE:  # given up before any run: F2/F3 are off now
                status.update("[dim]ctrl+r runs the grader · Enter records the rating[/]")
            if gave_up and not typing:  # after a run the keys stay text (F6 moves on)
                self.query_one("#result-box").focus()  # so 1-4 and Enter rate, not type
                self.results_take_keys = True  # a redraw before that focus lands must not say F6
                proposal_widget.update(
                    f"[b]Proposed rating: {self.proposal.label}[/b] ({plain(self.proposal.reason)})\n"
                    "[dim]Enter records it, or a key from 1 (Again) to 4 (Easy) records another[/]")
            self.query_one("#result-box", VerticalScroll).scroll_home(animate=False)
        self.refresh_bindings()

    def check_action(self, action: str, parameters: tuple) -> bool | None:
        # Textual: False hides a key, None shows it dimmed
        if action in ("hint", "give_up") and self.proposal is not None:
            return False  # the try is over: its rating is what is left to do
        if action == "rate_drill":
            if self.proposal is None:
                return False
            return None if isinstance(self.focused, TextArea) else True
        return True

    def action_hint(self) -> None:
        from studyapp.drill_reviews import NoHintsLeft, TryOver

        try:
            hint = self.study.drill_hint(self.drill_id)
        except NoHintsLeft as exc:
            self.notify(f"{exc}; F3 gives up and shows the reference.", timeout=4)
            return
        except TryOver as exc:  # finished elsewhere (`studyapp grade` in another shell)
            self.notify(f"{exc}.", timeout=5)
            self.refresh_review_state()
            return
        except Exception as exc:  # noqa: BLE001
            self.app.report_error(exc, title="Could not show a hint")
            return
        counted = "counted in the rating" if hint.counted else "practice: not counted"
        self.notify(f"Hint {hint.number}/{hint.of} ({counted}).", timeout=3)
        self.refresh_review_state()
        self.call_after_refresh(self._scroll_to_newest_hint)

    def _scroll_to_newest_hint(self, tries: int = 0) -> None:
        """Put the hint just asked for at the top of the task pane: the hints follow a
        statement that is often taller than the pane, where F2 alone would leave them unseen.
        Run from the command palette, the hints are not laid out until the palette has gone:
        tried again for up to a second."""
        from textual.content import Content

        widget = self.query_one("#drill-hints", Static)
        if self.app.screen is not self or not widget.virtual_region.height:
            if tries < 20:
                self.set_timer(0.05, lambda: self._scroll_to_newest_hint(tries + 1))
            return
        hints = self.study.drill_hints_shown(self.drill_id)
        earlier = "\n".join(hint_markup(h) for h in hints[:-1])
        lines_before = len(Content.from_markup(earlier).wrap(widget.content_region.width)) if earlier else 0
        self.query_one("#statement-box", VerticalScroll).scroll_to(
            y=widget.virtual_region.y + widget.styles.padding.top + lines_before, animate=False)

    def action_give_up(self) -> None:
        def answered(sure: bool | None) -> None:
            if not sure:
                return
            self.text_at_run = self.query_one("#code", TextArea).text
            try:
                self.study.drill_give_up(self.drill_id)
            except LookupError as exc:
                self.notify(str(exc), severity="warning", timeout=5)
            except Exception as exc:  # noqa: BLE001
                self.app.report_error(exc, title="Could not give up")
                return
            self.refresh_review_state(gave_up=True)

        try:
            question = self.study.drill_give_up_question(self.drill_id)
        except Exception as exc:  # noqa: BLE001
            self.app.report_error(exc, title="Could not give up")
            return
        self.app.push_screen(Confirm(question, yes="Give up, show the reference", no="Keep trying"), answered)

    def action_rate_drill(self, rating: int | None = None) -> None:
        if self.proposal is None:
            return
        from studyapp.drill_reviews import TryAlreadyRated

        try:
            result = self.study.record_drill_review(self.drill_id, rating, this_try=self.proposal)
        except TryAlreadyRated as exc:  # `studyapp rate-drill`, or the app in another terminal
            if exc.newer_try:  # its rating would have gone to a try this screen never showed
                self.notify(NEWER_TRY + " What that try earned is shown now, if it is finished.",
                            severity="warning", timeout=8)
            else:
                self.notify(RATED_ELSEWHERE, severity="warning", timeout=6)
            self.refresh_review_state()
            return
        except Exception as exc:  # noqa: BLE001
            self.app.report_error(exc, title="Rating not saved")
            return
        from studyapp.drill_reviews import DRILL_RATING_LABELS
        from studyapp.schedule import format_interval

        self.notify(f"{DRILL_RATING_LABELS[result.rating]}: next in {format_interval(result.interval)} "
                    f"({result.due.astimezone():%Y-%m-%d})", timeout=3)
        self.app.drill_rated_at = time.monotonic()  # the same key again must not rate the note below
        self.action_leave()

    def can_leave(self, retry: Callable[[], object]) -> bool:
        """Save before the screen goes; when saving fails, ask (and `retry` after a yes)."""
        self.asking = False  # a question over this screen was closed to get here, unanswered
        if self.unsaved:
            problem = self.save(then=retry)
            if problem is SAVED_ELSEWHERE:
                return False
            if problem is not None:
                def answered(leave: bool | None) -> None:
                    if leave:
                        self.saved_text = self.query_one("#code", TextArea).text
                        retry()

                self.app.push_screen(Confirm(
                    f"Could not save {self.path.name}: {problem}\n\nLeave anyway and lose the unsaved code?",
                    yes="Leave, lose my edits", no="Stay"), answered)
                return False
            self.notify(f"Saved {self.path.name}.", timeout=2)
        if self.grading:
            self.study.cancel_grade()
            self.grading = False
        return True

    def action_leave(self) -> None:
        if self.can_leave(self.action_leave):
            self.app.pop_screen()


def _unreadable(exc: OSError | UnicodeDecodeError) -> str:
    """Why the drill file could not be read as text, in words (a Latin-1 editor's save, gone...)."""
    return "it holds bytes that are not UTF-8" if isinstance(exc, UnicodeDecodeError) else (exc.strerror or str(exc))
