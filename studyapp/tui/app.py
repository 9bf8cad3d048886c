"""The Textual application: modes for the four main screens, the vault loader, the palette.

The app is handed its core at start-up (`StudyApp(ctx, study=StudyFacade(ctx))`, as harlequin
and posting are handed theirs); tests hand in a facade with a fake grader, or a fake facade.

One screen per purpose: each mode holds only its own screen; a review or a drill is pushed on
top of the current mode and closed (saving, or asking when it cannot) before the app goes to
another mode, so no hidden screen keeps a review open or grades a file. A drill opened from a
review (`p`) sits over that review, and Esc goes back to it.

~490 lines on purpose: the modes, the vault loader and watcher, the palette and the app's
last-resort error handling are the app's own; the screens hold the rest.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from textual import work
from textual.app import App, ScreenStackError
from textual.binding import Binding
from textual.worker import Worker, WorkerState

from studyapp.tui.commands import ScreenActionsProvider, StudyCommandsProvider
from studyapp.tui.messages import (
    CachedCountsRead,
    HistoryRepaired,
    RatingsUndoneElsewhere,
    ReviewLogChanged,
    TodayComputed,
    VaultFilesChanged,
    VaultLoaded,
    VaultLoadFailed,
    VaultSynced,
)

if TYPE_CHECKING:
    from studyapp.context import Context
    from studyapp.history_guard import Notice


WATCH_RETRY_SECONDS = 5.0
"""First wait before watching the vault again after the watch failed (doubling, up to a minute)."""


def _today_screen():
    from studyapp.tui.screens.today import TodayScreen

    return TodayScreen()


def _drills_screen():
    from studyapp.tui.screens.drills import DrillsScreen

    return DrillsScreen()


def _notes_screen():
    from studyapp.tui.screens.notes import NotesScreen

    return NotesScreen()


def _stats_screen():
    from studyapp.tui.screens.stats import StatsScreen

    return StatsScreen()


GRADER_START_AT_THE_LATEST = 5.0
"""Seconds after the first frame when the grader's worker starts even if Today is not drawn yet."""
LOG_POLL_SECONDS = 5.0
"""How often the app also checks the review log's sizes (one `stat` per device file): the
watcher may miss a change (a network drive, a folder a sync tool made a moment ago)."""
CLOCK_CHECK_SECONDS = 30.0
"""How often the app compares the clock with the span in which the current screen's figures are
right (`check_the_clock`). A timer that compares, rather than one set for the moment itself,
also catches up after the laptop slept or the clock jumped: the event loop's clock stops during
a suspend, the wall clock does not. At most this late, and one `now()` each time."""


class StudyApp(App):
    """Review notes and practise drills; every screen reads through one `study` object."""

    TITLE = "studyapp"
    CSS_PATH = Path(__file__).with_name("studyapp.tcss")  # absolute: subclasses live elsewhere
    # Screens are built on first visit so start-up pays only for Today (Stats imports plotext).
    MODES = {
        "today": _today_screen,
        "drills": _drills_screen,
        "notes": _notes_screen,
        "stats": _stats_screen,
    }
    DEFAULT_MODE = "today"
    start_grader_early = True
    """Start the grader's worker process once the first frame is drawn, so the first grade is
    as quick as later ones (tests that never grade turn it off)."""
    COMMANDS = App.COMMANDS | {StudyCommandsProvider, ScreenActionsProvider}
    BINDINGS = [
        Binding("t", "switch_mode('today')", "Today"),
        Binding("d", "switch_mode('drills')", "Drills"),
        Binding("n", "switch_mode('notes')", "Notes"),
        Binding("S", "switch_mode('stats')", "Stats", key_display="S"),
        Binding("ctrl+q", "quit", "Quit", priority=True),
    ]

    def __init__(self, ctx: Context, study: Any = None, notices: Sequence[Notice] = ()) -> None:
        super().__init__()
        self.ctx = ctx
        self.notices = tuple(notices)
        """What the start-up check of the review history found (`history_guard`): shown as
        warnings once the app is up."""
        if study is None:
            from studyapp.facade import StudyFacade

            study = StudyFacade(ctx)
        self.study = study
        """The core as the UI sees it (`studyapp.facade.StudyFacade`, or a test double with its methods)."""
        self.study_ready = False
        """True once the vault and history are loaded; screens wait for it before asking for data."""
        self.drill_rated_at = float("-inf")
        """When a drill's rating last closed its screen (`review.REPEAT_GUARD`)."""
        self._save_theme = False
        """Off while the theme comes from the settings; on once the app runs."""
        self._stop_watching = threading.Event()
        """Set on exit: the vault watcher's thread ends."""
        self._watcher: threading.Thread | None = None
        self._today_drawn = threading.Event()
        """Set once Today has everything to draw (or the load failed): the grader's worker,
        which imports torch for seconds, starts then, so on two cores it does not slow the
        load and Today's figures down."""
        self._setting_warnings: list[str] = []
        """Settings that cannot be used but need not stop the app, said once it shows."""
        try:
            self.theme = ctx.settings.theme
        except Exception:  # an unknown theme name in config.toml must not stop the app
            self.theme = "textual-dark"
            from studyapp.config import setting_warnings

            config_file = getattr(getattr(ctx, "paths", None), "config_file", None)
            self._setting_warnings = setting_warnings(ctx.settings, Path(config_file or "config.toml"))
        self.bug: str | None = None
        """The one line that ends the app after a bug of ours (`report_bug`), printed in place of
        Textual's traceback; None while none happened."""

    def _handle_exception(self, error: Exception) -> None:
        """A bug of ours ends the app as it ends a CLI command: its traceback goes to `crash.log`
        in the data dir and the terminal gets one line (`_print_error_renderables`), exit 70.
        `STUDYAPP_DEBUG=1` keeps Textual's own traceback. Tests still see the exception (pilot
        re-raises it)."""
        import os

        if self.bug is None and not os.environ.get("STUDYAPP_DEBUG"):
            from studyapp.errors import report_bug

            data_dir = getattr(getattr(self.ctx, "paths", None), "data_dir", None)
            self.bug = report_bug(error, data_dir, ["(the app)"])
        super()._handle_exception(error)

    def _print_error_renderables(self) -> None:
        if self.bug is None:
            super()._print_error_renderables()
            return
        self._exit_renderables.clear()
        self.error_console.print(f"studyapp: error: {self.bug}", markup=False, highlight=False,
                                 soft_wrap=True)

    def notify(self, message: str, *, title: str = "", severity: Any = "information",
               timeout: float | None = None, markup: bool = True) -> None:
        """Notifications are text, never markup: they carry note titles, paths and error
        messages, and a `[/b` in one ended the app (`markup` is ignored; no caller uses it).
        Control characters in them are shown, not obeyed (`printable`)."""
        from studyapp.textwidth import printable

        super().notify(printable(message), title=printable(title), severity=severity, timeout=timeout,
                       markup=False)

    def action_help_quit(self) -> None:
        """ctrl+c's hint, as text: Textual writes it in markup, which `notify` does not read."""
        for key, active in self.active_bindings.items():
            if active.binding.action in ("quit", "app.quit"):
                self.notify(f"Press {key} to quit the app", title="Do you want to quit?")
                return

    def watch_theme(self, name: str) -> None:
        """A theme picked after start-up (from the palette) is kept for the next run."""
        if not self._save_theme or name == self.ctx.settings.theme:
            return
        from studyapp.config_edit import set_setting

        try:
            set_setting(self.ctx.paths.config_file, "theme", name)
        except Exception as exc:  # noqa: BLE001 - the theme still applies; saving it is a bonus
            self.report_error(exc, title="Could not save the theme")
            return
        self.ctx.settings.theme = name

    def on_mount(self) -> None:
        self._save_theme = True
        for line in self._setting_warnings:  # the CLI's stderr line is hidden behind the app
            self.notify(line, title="Settings", severity="warning", timeout=20)
        for notice in self.notices:
            if notice.warning:  # a lost or shared history: stays until read
                self.notify(notice.text, title="Review history", severity="warning", timeout=60)
            else:  # information said once: out of the way soon
                self.notify(notice.text, title="Review history", timeout=8)
        # The load (a worker thread) starts after Today's first two frames: its figures, then the
        # rest of the last start's snapshot. Started sooner, on two cores, its imports and queries
        # held the second frame back by a tenth of a second.
        self.call_after_refresh(self.call_after_refresh, self.load_vault)
        if self.start_grader_early:
            self.call_after_refresh(self.start_grader)

    @work(thread=True, exclusive=True, exit_on_error=False, group="load")
    def load_vault(self) -> None:
        """Load the vault after the first frame is drawn; Today's figures come first from the
        metadata cache (one query), and are drawn again once the load has seen every file."""
        try:
            open_study = getattr(self.study, "open", None)
            if open_study is not None:
                open_study()
            self._post_startup_messages()
            self._post_cached_counts()
            notes, problems = self.study.load()
        except Exception as exc:  # noqa: BLE001 - any failure becomes a notification
            self.post_message(VaultLoadFailed(self._explain(exc)))
            return
        self.post_message(VaultLoaded(notes, problems))

    def _post_startup_messages(self) -> None:
        """Crashed writes repaired when the history opened: said once, as the CLI says them."""
        messages = getattr(self.study, "startup_messages", None)
        lines = messages() if messages is not None else ()
        if lines:
            self.post_message(HistoryRepaired(tuple(lines)))

    def on_history_repaired(self, message: HistoryRepaired) -> None:
        # "Review history", as the start-up notices: not every line is a repair (a database
        # that served another vault, kept as a backup, is the usual first switch to one's notes)
        self.notify("\n".join(message.lines), title="Review history", severity="warning", timeout=30)

    def _post_cached_counts(self) -> None:
        """A preview: if it cannot be computed, Today simply waits for the load."""
        cached_counts = getattr(self.study, "cached_counts", None)
        try:
            counts = cached_counts() if cached_counts is not None else None
        except Exception:  # noqa: BLE001 - the load that follows reports real failures
            return
        if counts is not None:
            self.post_message(CachedCountsRead(counts))

    def on_cached_counts_read(self, message: CachedCountsRead) -> None:
        show = getattr(self.screen, "show_cached_counts", None)
        if show is not None and not self.study_ready:
            show(message.counts)

    @work(thread=True, exclusive=True, exit_on_error=False, group="grader", name="Starting the grader")
    def start_grader(self) -> None:
        """Spawn the grader's worker process (torch imports there, never in this process), once
        Today is drawn, or after a few seconds when the learner went elsewhere first."""
        self._today_drawn.wait(GRADER_START_AT_THE_LATEST)
        if self._stop_watching.is_set():  # the app is exiting
            return
        start = getattr(self.study, "start_grader", None)
        if start is not None:
            start()

    def on_today_computed(self, message: TodayComputed) -> None:
        self.call_after_refresh(self._today_drawn.set)  # once that frame is on screen

    def on_vault_loaded(self, message: VaultLoaded) -> None:
        self.study_ready = True
        self.watch_vault()
        self.set_interval(LOG_POLL_SECONDS, self.take_other_devices_reviews, name="poll the review log")
        self.set_interval(CLOCK_CHECK_SECONDS, self.check_the_clock, name="check the clock")
        if message.problems:
            self.notify(
                f"{message.problems} note(s) could not be read; see Notes (n).",
                title="Vault",
                severity="warning",
            )
        from studyapp.tui.screens.today import TodayScreen

        if not isinstance(self.screen, TodayScreen):  # Today writes them with its pairings
            self.keep_loaded_notes()
        self._refresh_current_screen()

    @work(thread=True, exclusive=True, exit_on_error=False, group="cache", name="Keeping the notes read")
    def keep_loaded_notes(self) -> None:
        """Write the metadata cache's rows that the first load held for Today's pairings now:
        the learner is elsewhere, and a crash would lose them."""
        keep = getattr(self.study, "keep_loaded_notes", None)
        if keep is not None:
            keep()

    def on_vault_load_failed(self, message: VaultLoadFailed) -> None:
        self._today_drawn.set()
        self.notify(message.reason, title="Could not load the vault", severity="error", timeout=30)
        show = getattr(self.screen, "show_load_error", None)
        if show is not None:
            show(message.reason)

    def watch_vault(self) -> None:
        """Start the thread that posts the notes changed on disk, until the app exits. A plain
        thread rather than a Textual worker: it never completes, and waiting for the app's
        workers to finish must not wait for it."""
        from studyapp.history.eventlog import log_dir
        from studyapp.tui.vault_watch import VaultFolderReplaced, watch_notes

        if self._watcher is not None:
            return

        def run() -> None:
            """Watch until the app ends; a failed watch (a symbolic link loop, out of inotify
            watches) is said once and tried again, a little later each time, and what changed
            meanwhile is taken in by loading the vault again."""
            delay, said, again = WATCH_RETRY_SECONDS, False, False

            def load_again() -> None:  # what changed while nothing watched
                self.post_message(VaultFilesChanged(("/",)))
                self.post_message(ReviewLogChanged())

            while True:
                try:
                    watch_notes(self.ctx.paths.vault_dir, self._stop_watching,
                                lambda paths: self.post_message(VaultFilesChanged(paths)),
                                log_dir=log_dir(self.ctx.paths, self.ctx.settings),
                                on_log_change=lambda: self.post_message(ReviewLogChanged()),
                                on_started=load_again if again else None)
                    return  # stopped with the app
                except VaultFolderReplaced:  # watch the folder now at the vault's path, at once
                    again = True
                    continue
                except Exception as exc:  # noqa: BLE001 - the app still works without it
                    if not said:
                        said = True
                        self.call_from_thread(self.notify, f"Changes made outside the app show when watching "
                                              f"works again; trying every few seconds ({exc}).",
                                              title="Not watching the vault", severity="warning")
                if self._stop_watching.wait(delay):
                    return
                delay = min(delay * 2, 60.0)
                load_again()
                again = False

        self._watcher = threading.Thread(target=run, name="studyapp vault watcher", daemon=True)
        self._watcher.start()

    def on_vault_files_changed(self, message: VaultFilesChanged) -> None:
        self.take_outside_changes(message.paths)

    @work(thread=True, exclusive=False, exit_on_error=False, group="sync", name="Vault changes")
    def take_outside_changes(self, paths: tuple[str, ...]) -> None:
        changed = self.study.notes_changed(paths)
        self._post_undone_elsewhere()
        self.post_message(VaultSynced(changed))

    def _post_undone_elsewhere(self) -> None:
        """After a sync (from a worker): ratings of the review session another process undid."""
        undone_elsewhere = getattr(self.study, "undone_elsewhere", None)
        titles = undone_elsewhere() if undone_elsewhere is not None else ()
        if titles:
            self.post_message(RatingsUndoneElsewhere(tuple(titles)))

    def on_ratings_undone_elsewhere(self, message: RatingsUndoneElsewhere) -> None:
        from studyapp.tui.screens.review import ReviewScreen

        titles = message.titles
        if len(titles) == 1:
            self.notify(f"The rating of “{titles[0]}” was undone in another studyapp: the note is "
                        "due again in this session.", title="Review", timeout=6)
        else:
            self.notify(f"{len(titles)} ratings of this session were undone in another studyapp: "
                        "those notes are due again in it.", title="Review", timeout=6)
        for screen in self.screen_stack:
            if isinstance(screen, ReviewScreen):
                screen.ratings_undone_elsewhere()

    def on_review_log_changed(self, message: ReviewLogChanged) -> None:
        self.take_other_devices_reviews()

    @work(thread=True, exclusive=True, exit_on_error=False, group="history", name="Reviews from other devices")
    def take_other_devices_reviews(self) -> None:
        taken = self.study.take_other_devices_reviews()
        self._post_undone_elsewhere()
        if taken is None:
            return
        self.call_from_thread(self._refresh_current_screen)
        if taken.reviews:
            self.call_from_thread(self.notify, f"{taken.reviews} review(s) from another device taken in"
                                  + (f"; {len(taken.notes)} note(s) updated." if taken.notes else "."),
                                  title="Review history")
        for problem in taken.problems:
            self.call_from_thread(self.notify, problem, title="Review history", severity="warning")

    def on_vault_synced(self, message: VaultSynced) -> None:
        if message.changed:
            self._refresh_current_screen()

    def check_the_clock(self) -> None:
        """Time passing changes what is due: a learning step or a drill falls due, a new day
        brings new notes and moves the streak. A screen that draws such figures (Today, Drills,
        Stats) keeps `fresh_between`, the (computed at, valid until) span its worker returned;
        once the clock is outside it (past it, or set back before it), the screen computes
        them again, in its worker. Only the screen on view: one under another is computed again
        when it comes back, and a review session (or a drill) on view keeps its queue, its own
        requeue taking care of learning steps."""
        from studyapp.tui.screens.base import StudyScreen

        try:
            screen = self.screen
        except ScreenStackError:  # the app is closing: its screens are gone, the timer not yet
            return
        span = getattr(screen, "fresh_between", None)
        if span is None or not self.study_ready or not isinstance(screen, StudyScreen):
            return
        since, until = span
        if not since <= self.ctx.now() < until:
            screen.refresh_data()

    def _refresh_current_screen(self) -> None:
        refresh = getattr(self.screen, "refresh_data", None)
        if refresh is not None:
            refresh()

    def undo_and_say(self):
        """Undo the newest rating or suspension (any screen's `u`) and say what was undone;
        returns the `views.Undone`, or None when there was nothing to undo or it failed."""
        from studyapp.views import UndoKind

        try:
            undone = self.study.undo()
        except Exception as exc:  # noqa: BLE001 - a notification, never a traceback
            self.report_error(exc, title="Could not undo")
            return None
        if undone is None:
            self.notify("Nothing to undo.")
            return None
        what = "suspension" if undone.kind is UndoKind.SUSPENSION else "rating"
        self.notify(f"Undid the {what} of “{undone.title}”.", timeout=3)
        return undone

    def report_error(self, exc: BaseException, title: str = "Error") -> None:
        """Every failure the user can see ends here: a notification, never a traceback."""
        self.notify(self._explain(exc), title=title, severity="error", timeout=10)

    def _explain(self, exc: BaseException) -> str:
        """The same one line the CLI prints for an OS or database failure."""
        from studyapp.errors import user_message

        return (user_message(exc, self.ctx.paths.database_file)
                or str(exc) or type(exc).__name__)

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        if event.state == WorkerState.ERROR and event.worker.error is not None:
            self.report_error(event.worker.error, title=event.worker.name or "Background task")

    # -- one screen per purpose ----------------------------------------------------------

    def close_screens(self, retry: Callable[[], object], keep: tuple[type, ...] = ()) -> bool:
        """Close every screen above the current mode's own (down to one of type `keep`), each
        saving first; False when one must ask the learner (then `retry` runs once answered)."""
        while len(self.screen_stack) > 1 and not isinstance(self.screen, keep):
            can_leave = getattr(self.screen, "can_leave", None)
            if can_leave is not None and not can_leave(retry):
                return False
            self.pop_screen()
        return True

    async def action_switch_mode(self, mode: str) -> None:
        if self.close_screens(lambda: self.run_action(f"switch_mode({mode!r})")) and mode != self.current_mode:
            self.switch_mode(mode)

    async def action_quit(self) -> None:
        """Quit, but only once every open drill has saved (or the learner chose to lose it)."""
        if self.close_screens(lambda: self.run_action("quit")):
            self.exit()

    def action_start_review(self) -> None:
        from studyapp.tui.screens.review import ReviewScreen

        if not self.study_ready:
            self.notify("Still loading the vault…")
            return
        if isinstance(self.screen, ReviewScreen):
            return
        if not self.close_screens(self.action_start_review):
            return
        self.push_screen(ReviewScreen())  # on the screen it is started from: Esc goes back there

    def action_open_drill(self, drill_id: str) -> None:
        """Open a drill over the current mode's screen, or over the review it was reached from."""
        from studyapp.tui.screens.drill import DrillScreen
        from studyapp.tui.screens.review import ReviewScreen

        if isinstance(self.screen, DrillScreen) and self.screen.drill_id == drill_id:
            return
        if not self.close_screens(lambda: self.action_open_drill(drill_id), keep=(ReviewScreen,)):
            return
        self.push_screen(DrillScreen(drill_id))

    def on_unmount(self) -> None:
        self._stop_watching.set()
        self._today_drawn.set()
        if self._watcher is not None:
            self._watcher.join(timeout=2)
        close = getattr(self.study, "close", None)
        if close is not None:
            close()


def run_app(ctx: Context, notices: Sequence[Notice] = ()) -> int:
    """Entry point of the bare `studyapp` command: 0, or 70 after a bug of ours (as in the CLI)."""
    from studyapp.errors import ExitCode

    app = StudyApp(ctx, notices=notices)
    app.run()
    return ExitCode.BUG if app.bug is not None or app.return_code else ExitCode.OK
