"""The review session: question, reveal, rate 1–4 with interval previews, undo, suspend.

~420 lines on purpose: the screen's layouts for small terminals, the session's states (not begun,
a card, past the notes, a drill due) and the guards on its keys belong to one screen."""

from __future__ import annotations

import time

from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.reactive import reactive
from textual.widgets import Button, Header, Static
from textual.worker import Worker, WorkerState

from studyapp.tui.editor import edit_file
from studyapp.tui.markup import plain
from studyapp.tui.messages import ReviewCardReady
from studyapp.tui.screens.base import StudyScreen, footer_hides
from studyapp.tui.widgets.answer import Answer
from studyapp.tui.widgets.footer import KeysFooter
from studyapp.views import RATING_LABELS, Card, NoteChangedOutside, RatingOption

SHORT_ROWS = 20
"""A terminal shorter than this lays the review out compactly. At full size the fixed parts
(header, progress, the question in its border, the drills line, the rating buttons, the footer)
take 12 rows: on 12 the answer got none, only its border, and revealing it showed nothing."""
NARROW_COLUMNS = 60
TINY_ROWS = 12
"""Shorter than this, the review keeps only the question, the answer, the rating buttons and
the footer: compact, the rest still took eight rows, and the answer got two of ten (none of eight)."""


REPEAT_GUARD = 0.6
"""Seconds after a drill's rating closed its screen in which the review takes no rating key, nor
the Enter that opens the next drill (`_repeated`): a key that did not seem to take is pressed
again, and `2` twice rated the note underneath too, its answer still showing (a review the
learner never gave), Enter twice started the next drill's try. A drill left with Esc arms
nothing: the note's rating comes right after it."""


class ReviewScreen(StudyScreen):
    """One note at a time until the session queue is empty, then a summary."""

    VERTICAL_BREAKPOINTS = [(0, "-tiny"), (TINY_ROWS, "-short"), (SHORT_ROWS, "-tall")]
    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (NARROW_COLUMNS, "-wide")]
    """Narrower than NARROW_COLUMNS the rating buttons drop their margins and their intervals
    (`_label_ratings`): four buttons with intervals need about 56 cells, and at 40 columns only
    "1 Again" was in view."""
    """Below SHORT_ROWS rows the question and the rating buttons lose their borders, so the
    answer keeps rows to show itself in; below TINY_ROWS the header, the session counts, the
    drills line and the answer's border go too (studyapp.tcss)."""
    BINDINGS = [
        Binding("enter", "open_due_drill", "Open drill"),  # past the notes, a drill is offered
        Binding("space", "reveal", "Answer"),
        Binding("enter", "reveal", "Show answer", show=False),
        Binding("1", "rate(1)", "Again"),
        Binding("2", "rate(2)", "Hard"),
        Binding("3", "rate(3)", "Good"),
        Binding("4", "rate(4)", "Easy"),
        Binding("u", "undo", "Undo"),
        Binding("ctrl+z", "undo", "Undo", show=False),
        Binding("f", "full_note", "Note"),
        Binding("e", "edit", "Edit"),
        Binding("s", "suspend_note", "Suspend", show=False),
        Binding("p", "practise", "Drill", show=False),
        Binding("escape", "leave", "Back"),
        *footer_hides("today", "drills", "notes", "stats", quit=True),
    ]

    card: reactive[Card | None] = reactive(None, init=False)
    revealed: reactive[bool] = reactive(False, init=False)
    finished: reactive[bool] = reactive(False, init=False)

    def __init__(self) -> None:
        super().__init__()
        self.options: dict[int, RatingOption] = {}
        self.shown_at = time.monotonic()
        self.showing_full = False
        self.due_drill = None
        """The drill due after the notes (`drill_reviews.DueDrill`), shown once they are done."""
        self.begun = False
        """Whether this session's queue is built: until then the facade still answers from the
        last session (no note left, a drill due), so the screen shows nothing to act on."""
        self.refresh_skipped = False
        """A refresh asked for before then, done once the session is shown."""
        self.reopen = False
        """Ratings of the session were undone elsewhere: past its summary, the notes come back."""

    def compose(self) -> ComposeResult:
        yield Header()
        with Vertical(id="review"):
            yield Static("", id="review-progress")
            yield Static("Preparing the session…", id="question")
            yield Static("", id="review-drills")
            yield Answer(id="answer")
            yield Static("", id="review-summary")
            with Horizontal(id="ratings"):
                for rating, label in RATING_LABELS.items():
                    button = Button(f"{rating} {label}", id=f"rate-{rating}", classes=f"rating rating-{rating}")
                    button.can_focus = False  # keys always mean the screen's bindings; clicks still rate
                    yield button
        yield KeysFooter()

    def on_mount(self) -> None:
        self._set_answer_visible(False)
        self.query_one("#review-summary").display = False
        self.begin()

    def _set_answer_visible(self, visible: bool) -> None:
        """Conceal rather than hide: the answer keeps its size and rendering while the question
        is asked, so revealing a long note only repaints the lines on screen."""
        answer = self.query_one("#answer", Answer)
        answer.display = True
        answer.conceal(not visible)
        ratings = self.query_one("#ratings")
        ratings.display = True
        ratings.visible = visible

    @work(thread=True, exclusive=True, exit_on_error=False, group="review")
    def begin(self) -> None:
        """Build the session queue (reads the store; may take a moment on big vaults)."""
        self.study.begin_review()
        self.post_message(ReviewCardReady(self.study.current_card(), self.study.progress()))

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        super().on_worker_state_changed(event)  # the reason, as a notification
        if event.worker.group == "review" and event.state == WorkerState.ERROR:
            self.query_one("#question", Static).update("Could not start the session. Esc goes back.")

    def on_review_card_ready(self, message: ReviewCardReady) -> None:
        self.begun = True
        self._show(message.card)
        if self.refresh_skipped:  # a note changed while the queue was built
            self.refresh_skipped = False
            self.refresh_data()

    def refresh_data(self) -> None:
        """Back on view, or notes changed on disk: show the current note as it is now."""
        if not self.begun:
            self.refresh_skipped = True
            return
        if not self.is_active:
            return
        if self.finished and self.card is None and not self.reopen:
            # the summary stays (its time too), unless a drill is due again: its rating in this
            # session undone elsewhere (`studyapp undo`), which changes no note of the session
            if self.study.next_due_drill() is not None:
                self._show(None)
            return
        self.reopen = False
        card = self.study.current_card()
        if card is None and self.card is None:
            self._show(None)  # back from a drill: the next drill, or the summary
            return
        if card == self.card:
            self._update_progress()  # a rating undone elsewhere, a review from another device
            return
        renamed = None if self.card is None else self.study.renamed_to(self.card.path)
        # the same note: renamed, or at its path under its title (another note written over it
        # is shown from its question: a rating is never given to an answer not asked)
        same_note = card is not None and self.card is not None and (
            card.path == renamed or (card.path == self.card.path and card.title == self.card.title))
        was_revealed = self.revealed and same_note
        if self.card is not None and (card is None or card.path not in (self.card.path, renamed)):
            why = "was suspended elsewhere" if self.study.suspended_now(self.card.path) else "changed outside the app"
            self.notify(f"“{self.card.title}” {why} and left this session.", severity="warning", timeout=6)
        self._show(card)
        if was_revealed:
            self.action_reveal()

    def ratings_undone_elsewhere(self) -> None:
        """Another studyapp undid ratings of this session: their notes are due in it again
        (shown once the note on screen is rated, or at once past the summary); the counts follow."""
        self.reopen = True
        self.refresh_data()

    def _show(self, card: Card | None) -> None:
        for line in self.study.left_out():  # notes that could not be shown, said once each
            self.notify(line, title="Left out of the session", severity="warning", timeout=10)
        self.showing_full = False
        self.revealed = False
        self.card = card
        self._update_progress()
        self.due_drill = None
        if card is None:
            self.due_drill = self.study.next_due_drill()
            if self.due_drill is not None:
                self._show_due_drill(self.due_drill)
                return
            self._show_summary()
            return
        self.finished = False
        self.query_one("#review-summary").display = False
        self.query_one("#question", Static).update(f"[b]{plain(card.title)}[/b]")
        self.query_one("#question").display = True
        self.query_one("#review-drills").add_class("of-a-note")  # p's hint: left out when tiny
        if card.drills or card.unknown_drills:
            drills = ", ".join(plain(d) for d in card.drills)
            unknown = ", ".join(plain(d) for d in card.unknown_drills)
            line = f"[dim]Drills:[/] {drills}  [dim](p to practise)[/]" if drills else "[dim]Drills:[/]"
            if unknown:
                line += f"  [dim]not drills here:[/] {unknown}"
            self.query_one("#review-drills", Static).update(line)
        else:
            self.query_one("#review-drills", Static).update("")
        # Render the answer while it is concealed, so revealing it only repaints the screen.
        self.query_one("#answer", Answer).show(answer_markdown(card))
        self._set_answer_visible(False)
        self.options = {}
        self.shown_at = time.monotonic()

    def _update_progress(self) -> None:
        progress = self.study.progress()
        later = f" · {progress.waiting} step{'s' if progress.waiting != 1 else ''} later" if progress.waiting else ""
        self.query_one("#review-progress", Static).update(
            f"[$primary]{progress.new} new[/] · [$error]{progress.learning} learning[/] · "
            f"[$success]{progress.review} review[/]  [dim]{progress.reviewed} reviewed{later}[/]"
        )

    def _show_due_drill(self, drill) -> None:
        """The notes are done and a drill is due: offer it (Enter opens it, from a fresh starter)."""
        self.finished = False
        self.query_one("#review-summary").display = False
        kind = "New drill" if drill.is_new else "Drill due"
        self.query_one("#question", Static).update(f"[b]{kind}: {plain(drill.title)}[/b]")
        self.query_one("#question").display = True
        self.query_one("#review-drills").remove_class("of-a-note")  # how to go on: shown at any size
        self.query_one("#review-drills", Static).update(
            "[dim]Write it from memory, run the grader (ctrl+r); the rating comes from what happened "
            "(runs, hints, time). Enter opens it · Esc ends the session.[/]")
        self.query_one("#answer").display = False
        self.query_one("#ratings").display = False
        self.refresh_bindings()

    def _show_summary(self) -> None:
        self.finished = True
        summary = self.study.summary()
        counts = "  ".join(f"{RATING_LABELS[r]} {summary.by_rating.get(r, 0)}" for r in RATING_LABELS)
        minutes, seconds = divmod(round(summary.seconds), 60)
        text = (
            f"[b]Session complete.[/b]\n\n"
            f"Reviewed {summary.reviewed} note{'s' if summary.reviewed != 1 else ''} in {minutes}m {seconds:02d}s.\n"
            f"{counts}\n\n[dim]Press escape to go back, u to undo the last rating.[/]"
        )
        self.query_one("#question").display = False
        self.query_one("#review-drills", Static).update("")
        self.query_one("#answer").display = False
        self.query_one("#ratings").display = False
        summary_widget = self.query_one("#review-summary", Static)
        summary_widget.update(text)
        summary_widget.display = True

    def check_action(self, action: str, parameters: tuple) -> bool | None:
        if not self.begun and action != "leave":
            return False  # a key pressed before the session is built acts on nothing
        if action == "open_due_drill":  # the page offering the day's drill: Enter opens it
            return self.card is None and self.due_drill is not None
        if action in ("reveal", "full_note", "edit", "suspend_note", "practise") and self.card is None:
            return False  # past the notes (a drill offered, the summary): no note to act on
        if action == "rate" and not self.revealed:
            return False  # hidden until the answer shows, as Anki hides its rating buttons
        if action == "reveal" and self.revealed:
            return False  # hide "Show answer" so the footer has room for the ratings
        if action == "practise" and (self.card is None or not (self.card.drills or self.card.unknown_drills)):
            return None
        return True

    def _repeated(self) -> bool:
        """A key pressed again just after a drill's rating closed its screen (`REPEAT_GUARD`):
        meant for the drill, not for what the review shows now."""
        return time.monotonic() - self.app.drill_rated_at < REPEAT_GUARD

    def action_open_due_drill(self) -> None:
        if self.card is None and self.due_drill is not None and not self._repeated():
            self.app.action_open_drill(self.due_drill.id)  # a second Enter would start the next drill's try

    def action_reveal(self) -> None:
        if not self.begun:
            return
        if self.card is None or self.revealed:  # a drill offered past the notes opens with Enter only:
            return  # the reflex "space, 3" would type the 3 into its code
        try:
            options = self.study.rating_options(self.card.path)
        except Exception as exc:  # noqa: BLE001
            self.app.report_error(exc, title="Could not preview intervals")
            options = []
        self.options = {o.rating: o for o in options}
        self._label_ratings()
        self._set_answer_visible(True)
        self.revealed = True  # its watcher refreshes the footer's bindings

    def _label_ratings(self) -> None:
        """Each button's key and name, and the interval it gives where the width has room for
        it (the interval is told anyway once the note is rated)."""
        narrow = self.size.width < NARROW_COLUMNS
        for rating, label in RATING_LABELS.items():
            option = self.options.get(rating)
            suffix = f"  {option.interval}" if option and not narrow else ""
            self.query_one(f"#rate-{rating}", Button).label = f"{rating} {label}{suffix}"

    def on_resize(self) -> None:
        if self.revealed:
            self._label_ratings()

    def watch_revealed(self, revealed: bool) -> None:
        # once the answer shows, a tiny terminal gives the question at most two rows (studyapp.tcss)
        self.set_class(revealed, "-revealed")
        self.refresh_bindings()

    def watch_card(self) -> None:
        self.refresh_bindings()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        if event.button.id and event.button.id.startswith("rate-"):
            self.action_rate(int(event.button.id.removeprefix("rate-")))

    def action_rate(self, rating: int) -> None:
        if self.card is None or not self.revealed:
            return
        if self._repeated():
            return  # the drill's rating key, pressed twice: the second is not this note's rating
        duration = time.monotonic() - self.shown_at
        try:
            outcome = self.study.rate(self.card.path, rating, duration, revision=self.card.revision)
        except NoteChangedOutside as changed:
            self.notify(str(changed), title="Not rated", severity="warning", timeout=6)
            self._show(self.study.current_card())
            return
        except Exception as exc:  # noqa: BLE001 - e.g. the note cannot be written
            self.app.report_error(exc, title="Rating not saved")
            return
        self.notify(f"{RATING_LABELS[rating]}: next in {outcome.interval}", timeout=2)
        self._show(self.study.current_card())

    def action_undo(self) -> None:
        undone = self.app.undo_and_say()
        if undone is None:
            return
        if undone.card is not None:
            self._show(undone.card)
        elif self.card is None:  # past the notes (a drill's rating undone): offer what is due again
            self._show(self.study.current_card())

    def action_suspend_note(self) -> None:
        if self.card is None:
            return
        try:
            self.study.suspend(self.card.path)
        except Exception as exc:  # noqa: BLE001
            self.app.report_error(exc, title="Could not suspend")
            return
        self.notify(f"Suspended “{self.card.title}” (u undoes; resume it in Notes, n).", timeout=4)
        self._show(self.study.current_card())

    def action_full_note(self) -> None:
        if self.card is None:
            return
        self.showing_full = not self.showing_full
        answer = self.query_one("#answer", Answer)
        answer.show(self.card.body if self.showing_full else answer_markdown(self.card))
        if not self.revealed:
            self.action_reveal()

    def action_edit(self) -> None:
        if self.card is None:
            return
        path = self.study.note_file(self.card.path)
        if not edit_file(self.app, path):
            return
        try:
            card = self.study.reload_card(self.card.path)
        except Exception as exc:  # noqa: BLE001 - the edit may have broken the metadata block
            self.app.report_error(exc, title="Could not reload the note")
            return
        was_revealed = self.revealed
        self._show(card)
        if was_revealed:
            self.action_reveal()

    def action_practise(self) -> None:
        if self.card is None:
            return
        try:
            drill_id = self.study.practise_drill(self.card.path)
        except Exception as exc:  # noqa: BLE001 - e.g. the note names only drills that do not exist
            self.app.report_error(exc, title="No drill to practise")
            return
        self.app.action_open_drill(drill_id)

    def can_leave(self, retry) -> bool:
        """Nothing here is unsaved (each rating is written at once): the session just ends."""
        self.study.end_review()
        return True

    def action_leave(self) -> None:
        self.can_leave(self.action_leave)
        self.app.pop_screen()


EMPTY_NOTE = "*(This note has no text beyond its title.)*"
GOES_ON = "\n\n*(The note goes on: f shows the whole note.)*\n"
"""Under an answer that is one section of a longer note: a user's note of several `##`
sections answered with the first, and nothing said the rest was there."""


def answer_markdown(card: Card) -> str:
    """What the review shows as the answer: the card's answer, saying when the note has more."""
    if not card.answer.strip():
        return EMPTY_NOTE
    if len(_text_only(card.body)) > len(_text_only(card.answer)):
        return card.answer.rstrip("\n") + GOES_ON
    return card.answer


def _text_only(markdown: str) -> str:
    """The text without headings and whitespace: a note of one `##` section differs from its
    answer only by that heading, and does not go on."""
    return "".join("".join(line.split()) for line in markdown.splitlines() if not line.lstrip().startswith("#"))
