"""Home: what is due, the streak, a heatmap, today's drills and mastery per topic."""

from __future__ import annotations

from datetime import datetime

from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.widgets import Header, Static
from textual.worker import Worker, WorkerState, get_current_worker

from studyapp.today_snapshot import next_midnight
from studyapp.tui.markup import plain
from studyapp.tui.messages import TodayComputed, TodayCounted
from studyapp.tui.screens.base import StudyScreen
from studyapp.tui.widgets.bars import MasteryBars
from studyapp.tui.widgets.footer import KeysFooter
from studyapp.tui.widgets.heatmap import Heatmap
from studyapp.views import TodayCounts, TodaySummary


class Figure(Static):
    """A big number with a caption."""

    def __init__(self, caption: str, **kwargs) -> None:
        super().__init__("…", **kwargs)
        self.border_title = caption

    def show(self, value: str) -> None:
        self.update(value)


class TodayScreen(StudyScreen):
    BINDINGS = [
        Binding("r", "app.start_review", "Review"),
        Binding("enter", "app.start_review", "Review", show=False),
    ]

    def compose(self) -> ComposeResult:
        yield Header()
        with VerticalScroll(id="today"):
            with Horizontal(id="figures"):
                yield Figure("New · Learn · Review", id="due-counts", classes="figure")
                yield Figure("Reviewed today", id="reviewed-today", classes="figure")
                yield Figure("Streak", id="streak", classes="figure")
            yield Static("Loading your vault…", id="today-hint")
            with Vertical(id="heatmap-box", classes="box") as box:
                box.border_title = "Reviews"
                yield Heatmap(id="today-heatmap")
            with Horizontal(id="today-lower"):
                with Vertical(id="today-drills-box", classes="box") as box:
                    box.border_title = "Today's drills"
                    yield Static("…", id="today-drills")
                with Vertical(id="today-mastery-box", classes="box") as box:
                    box.border_title = "Mastery by topic"
                    yield MasteryBars(id="today-mastery", max_rows=8)
        yield KeysFooter()

    def on_mount(self) -> None:
        """Draw what Today showed at the last start when it is still right, in the first frame;
        the load then checks the vault and the figures are drawn again."""
        snapshot = getattr(self.study, "today_snapshot", None)
        summary = snapshot() if snapshot is not None and not self.app.study_ready else None
        if summary is not None:
            self._show_counts(summary, checking=True)
            self._figures_shown = True
            # the heatmap, drills and mastery a frame later: the first frame comes sooner
            self.call_after_refresh(self._show_rest_of_snapshot, summary)

    def _show_rest_of_snapshot(self, summary: TodaySummary) -> None:
        if self._figures_shown:  # not yet refreshed by the load
            self._show_summary(summary, checking=True)

    _figures_shown = False
    """Drawn from the snapshot and not yet refreshed: the whole summary is computed at once
    (the figures alone first would only delay it)."""

    fresh_between: tuple[datetime, datetime] | None = None
    """(computed at, valid until): while the clock is in it, the figures drawn are right; out of
    it the app has them computed again (`StudyApp.check_the_clock`). None while computing."""

    def refresh_data(self) -> None:
        self.fresh_between = None
        self.compute_summary(counts_first=not self._figures_shown)
        self._figures_shown = False

    @work(thread=True, exclusive=True, exit_on_error=False, group="today")
    def compute_summary(self, counts_first: bool = True) -> tuple[datetime, datetime]:
        """The figures first (cheap), then what needs every note's card; returns the span in
        which they stay right (`fresh_between`): until a note, a step or a drill falls due, or
        midnight."""
        since = self.app.ctx.now()
        worker = get_current_worker()  # a newer run cancels this one, whose thread still runs on:
        if counts_first:  # its figures, older, must not be posted over the newer run's
            counts = self.study.today_counts()
            if not worker.is_cancelled:
                self.post_message(TodayCounted(counts))
        keep = getattr(self.study, "keep_today", None)
        summary = self.study.today(keep_later=True) if keep else self.study.today()
        if worker.is_cancelled:
            return since, since
        self.post_message(TodayComputed(summary))
        valid_until = getattr(self.study, "today_valid_until", None)
        until = valid_until() if valid_until is not None else None
        if keep is not None:
            keep()  # for the next start, once this one has what it draws
        return since, until or next_midnight(since)

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        super().on_worker_state_changed(event)
        if event.worker.group == "today" and event.state == WorkerState.SUCCESS:
            self.fresh_between = event.worker.result

    def show_load_error(self, reason: str) -> None:
        self.query_one("#today-hint", Static).update(f"[red]Could not load the vault:[/] {plain(reason)}")

    def on_today_counted(self, message: TodayCounted) -> None:
        self._show_counts(message.counts)

    def show_cached_counts(self, counts: TodayCounts) -> None:
        """The figures as of the last load, until the vault is loaded and they are recomputed."""
        self._show_counts(counts, checking=True)

    def _show_counts(self, s: TodayCounts | TodaySummary, checking: bool = False) -> None:
        self.query_one("#due-counts", Figure).show(due_counts_markup(s.new, s.learning, s.review))
        self.query_one("#reviewed-today", Figure).show(str(s.reviewed_today))
        self.query_one("#streak", Figure).show(f"{s.streak} day{'s' if s.streak != 1 else ''}")
        waiting = s.new + s.learning + s.review
        drills = getattr(s, "drills_due", 0)  # a summary knows; the first figures do not yet
        if waiting:
            hint = f"{waiting} note{'s' if waiting != 1 else ''} waiting — press [b]r[/b] to review."
        elif drills:
            hint = f"{drills} drill{'s' if drills != 1 else ''} due — press [b]r[/b] to practise."
        else:
            hint = "Nothing due. Practise a drill ([b]d[/b]) or browse your notes ([b]n[/b])."
        if s.problems:
            hint += f"  [yellow]{s.problems} unreadable note(s): see Notes.[/]"
        if checking:
            hint += "  [dim](checking the vault for changes…)[/]"
        self.query_one("#today-hint", Static).update(hint)

    def on_today_computed(self, message: TodayComputed) -> None:
        self._show_summary(message.summary)

    def _show_summary(self, s: TodaySummary, checking: bool = False) -> None:
        self._show_counts(s, checking=checking)
        self.query_one("#today-heatmap", Heatmap).set_data(s.heatmap, self.app.ctx.today())
        self.query_one("#today-mastery", MasteryBars).rows = s.mastery_by_tag
        if s.drills:
            lines = [f"{_status_mark(d.status)} {plain(d.title)}  [dim]{d.status}[/]" for d in s.drills]
            drills = "\n".join(lines)
        else:
            drills = "[dim]No drills paired with today's notes.[/]"
        self.query_one("#today-drills", Static).update(drills)


def due_counts_markup(new: int, learning: int, review: int) -> str:
    """Anki's three counts in Anki's colours (blue new, red learning, green review)."""
    return f"[$primary]{new}[/] · [$error]{learning}[/] · [$success]{review}[/]"


def _status_mark(status: str) -> str:
    return {"passed": "[green]✔[/]", "failing": "[red]✘[/]"}.get(status, "[dim]○[/]")
