"""What the TUI needs on top of the core: one lock, the loaded vault kept current as files
change, and every answer mapped to a `studyapp.views` object.

The numbers and decisions come from the services the CLI calls too (`review_session`,
`drills`, `stats`, `mastery`, `reviews`); this module only holds them together for a
long-running app. Torch-free and Textual-free. Screens call it from workers and from the UI
thread, so every public method holds the lock; domain modules are imported on first use to
keep start-up light.

It runs past 400 lines because it is the screens' whole contract: some thirty public methods,
each a few lines that call a service and build a view. Split, the screens would depend on
several objects that share one lock.
"""

from __future__ import annotations

import os
import threading
from dataclasses import replace
from datetime import date, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from studyapp.views import (
    RATING_LABELS,
    Card,
    DrillDetail,
    DrillView,
    NoteChangedOutside,
    NoteSuspendedElsewhere,
    NoteView,
    OtherDevicesReviews,
    Problem,
    RatingOption,
    ReviewOutcome,
    ReviewProgress,
    SessionSummary,
    StatsData,
    TodayCounts,
    TodaySummary,
    Undone,
)

if TYPE_CHECKING:
    from collections.abc import Callable

    from studyapp.cards import NoteCard
    from studyapp.context import Context
    from studyapp.drills import GraderClient
    from studyapp.live_vault import LiveVault
    from studyapp.review_session import ReviewSession
    from studyapp.reviews import ReviewService

TOPIC_ROWS = 12
TODAYS_DRILL_NOTES = 30
"""Today's drills come from the first notes of the queue (pairing reads each note's body)."""


def _locked(method):
    def wrapper(self, *args, **kwargs):
        with self._lock:
            return method(self, *args, **kwargs)

    wrapper.__name__ = method.__name__
    wrapper.__doc__ = method.__doc__
    return wrapper


def _new_grader(ctx: Context) -> GraderClient:
    from studyapp.drills import new_grader_client

    return new_grader_client(ctx.settings)


APP_WRITE_WAIT_SECONDS = 3.0
"""How long a write in the app waits for another studyapp process to finish (the CLI waits 20 s):
the app's writes run on its event loop, and a rating that waited 20 s froze the screen, quitting
included. Past it the learner is told, and the same key tries again."""

class StudyFacade:
    """One learner's vault, review history and grader for the lifetime of the app.

    `make_grader(ctx)` builds the grader client (default: `drills.new_grader_client` from the
    settings, as the CLI does); tests hand in a fake here, at construction.
    """

    def __init__(self, ctx: Context, make_grader: Callable[[Context], GraderClient] | None = None) -> None:
        self.ctx = ctx
        self.make_grader = make_grader or _new_grader
        self._lock = threading.RLock()
        self._service: ReviewService | None = None
        self._vault: LiveVault | None = None
        self._session: ReviewSession | None = None
        self._snapshot_shown = False
        """Today was drawn from the last start's snapshot: no need for `cached_counts`."""
        self._left_out: list[str] = []
        """Why notes were left out of the session since the screen last asked (`left_out`)."""
        self._to_keep: tuple | None = None
        """What `today(keep_later=True)` computed and `keep_today` saves."""
        self._today_until: datetime | None = None
        """When the last `today()` stops being right by the clock alone (`today_valid_until`)."""
        self._served_elsewhere = False
        """Said that the database serves another vault now (its poll says it once)."""
        self._undone_elsewhere: list[str] = []
        """Titles of notes whose rating in this session another process undid, not yet said
        (`undone_elsewhere`)."""
        self._data_version: int | None = None
        """The database's `data_version` at the last poll (`take_other_devices_reviews`), or
        when it was opened."""
        self._renames: dict[str, str] = {}
        """{old path: path now} of the notes renamed while the app ran (`renamed_to`)."""
        from studyapp.drills import Grading

        self._grading = Grading(lambda: self.make_grader(ctx))

    # -- loading --------------------------------------------------------------------------

    @_locked
    def open(self) -> None:
        """Open the database and the scheduler (no note file is read); `load` does it too.
        Repairs of crashed writes happen here (`startup_messages` says what they did)."""
        from studyapp.live_vault import LiveVault
        from studyapp.review_session import ReviewSession
        from studyapp.reviews import ReviewService

        if self._service is None:
            self._service = service = ReviewService(self.ctx)
            service.writer_lock.wait_seconds = APP_WRITE_WAIT_SECONDS
            self._vault = vault = LiveVault(service, on_forget=lambda path: self.session.drop(path, requeue=False))
            self._session = ReviewSession(service, vault)
            # from now on, not from the first poll: a write before that one must be noticed too
            self._data_version = service.store.data_version()

    @_locked
    def startup_messages(self) -> tuple[str, ...]:
        """What opening the history repaired or could not do (`ReviewService.startup_lines`)."""
        return tuple(self._service.startup_lines()) if self._service is not None else ()

    @_locked
    def cached_counts(self) -> TodayCounts | None:
        """Today's figures from the metadata cache as the last load left it, without scanning
        the vault: shown while `load` runs, then replaced. None without a usable cache, or
        once the vault is loaded (the real figures are as cheap then) or Today was drawn from
        its snapshot (`today_snapshot`)."""
        from studyapp.cached_vault import read_cached_vault
        from studyapp.cards import note_cards

        self.open()
        if self.vault.loaded or self._snapshot_shown:
            return None
        cached = read_cached_vault(self.ctx.paths.cache_file, self.ctx.paths.vault_dir)
        if cached is None:
            return None
        now = self.ctx.now()
        items = note_cards(self.service.store, self.service.scheduler, cached.notes, now, due_by=now)
        return replace(self._counts(items), problems=cached.problems)

    @_locked
    def load(self) -> tuple[int, int]:
        """Open the database and load the vault (warm loads only stat files); returns (notes, problems)."""
        self.open()
        self.vault.load()
        return len(self.vault.notes), len(self.vault.problems)

    @property
    def service(self) -> ReviewService:
        if self._service is None:
            raise RuntimeError("the vault is not loaded yet")
        return self._service

    @property
    def vault(self) -> LiveVault:
        if self._vault is None:
            raise RuntimeError("the vault is not loaded yet")
        return self._vault

    @property
    def session(self) -> ReviewSession:
        if self._session is None:
            raise RuntimeError("the vault is not loaded yet")
        return self._session

    def _card(self, path: str, is_new: bool | None = None) -> Card:
        from studyapp.mastery import trained_drills, unknown_drills
        from studyapp.note_text import review_texts

        note = self.vault.notes[path]
        if is_new is None:
            is_new = self.session.card_state(path)[1]
        answer, body = review_texts(note.title, note.body or "", note.answer or "")
        return Card(path=path, title=note.title, answer=answer, body=body,
                    drills=trained_drills(note), unknown_drills=unknown_drills(note),
                    is_new=is_new, revision=note.content_hash)

    @_locked
    def notes_changed(self, paths) -> tuple[str, ...]:
        """Files changed outside the app (the vault watcher saw them): re-read the notes that
        were edited, or, when notes appeared, vanished or broke, load the vault again (warm
        loads only stat unchanged files, but that is still ~0.4 s at 10,000 notes); then take
        the session's notes as they are now. Returns the paths of notes that were added,
        removed or changed, or became unreadable."""
        if self._service is None or self._vault is None:
            return ()
        folders = any(path.endswith("/") for path in paths)  # renamed, moved in or removed
        if not folders and all(self._vault.same_on_disk(path) for path in paths):
            return ()  # the echo of the app's own writes
        from studyapp.live_vault import file_marks, renames

        marks = file_marks(self.vault.notes)
        edited = None if folders else self.vault.reread_edited(paths)
        if edited is not None:
            self._follow_renames(renames(marks, file_marks(self.vault.notes)))  # two names swapped
            self._follow_undos()  # `studyapp undo` rewrote a note this session rated
            if edited and self.session.active:
                self.session.requeue(keep_first=True)
            return edited
        changed = self.vault.reload_changes()
        self._follow_renames(self.vault.renames | self.service.last_moves)
        self._follow_undos()
        if changed:
            self.session.keep_only(self.vault.notes)
        return tuple(sorted(changed))

    def _follow_renames(self, moves: dict[str, str]) -> None:
        """Renamed notes stay in the session, under their new names (`renamed_to` says where)."""
        if moves:
            self.session.renamed(moves)
            self._renames = {old: moves.get(new, new) for old, new in self._renames.items()} | moves

    @_locked
    def renamed_to(self, path: str) -> str | None:
        """Where the note once at `path` is now, when it was renamed while the app ran."""
        return self._renames.get(path)

    def _follow_undos(self) -> None:
        """Ratings of this session undone by another process leave it, and their notes are due
        in it again (`ReviewSession.undone_elsewhere`); `undone_elsewhere` says which."""
        if self._session is None or not self._session.active:
            return
        for path in self._session.undone_elsewhere():
            note = self.vault.notes.get(path)
            self._undone_elsewhere.append(note.title if note is not None else path)

    @_locked
    def undone_elsewhere(self) -> tuple[str, ...]:
        """The titles of the notes whose rating in this session another process undid since
        the last call (each is due in the session again); () when none."""
        titles, self._undone_elsewhere = tuple(self._undone_elsewhere), []
        return titles

    @_locked
    def take_other_devices_reviews(self) -> OtherDevicesReviews | None:
        """Replay what other devices appended to their review logs (a sync tool copied their
        files in): card states, the notes' owned keys and the session's queue follow. None when
        no other process wrote the database and no log file changed (or another process holding
        the writer lock syncs it instead).

        Polled every few seconds, it also looks for this session's ratings that another process
        on this device undid (its log and the database agree then): the vault watcher sees the
        note change, and this catches what it saw before the undo was committed."""
        if self._service is None or self._vault is None:
            return None
        from studyapp.vault_binding import ServedElsewhere, check_still_served

        try:  # one query: the two vaults' log files may even have the same sizes
            check_still_served(self.service.store, self.service.served)
        except ServedElsewhere as exc:  # a command on another vault: said once, not every poll
            told, self._served_elsewhere = self._served_elsewhere, True
            return None if told else OtherDevicesReviews(0, (), (str(exc),))
        self._served_elsewhere = False  # that vault's command gave it back since
        version, seen = self.service.store.data_version(), self._data_version
        self._data_version = version
        written_elsewhere = version != seen
        changed = self.service.log_changed()
        before = self.service.store.review_count() if changed else 0
        result = self.service.sync(wait=False) if changed else None
        if result is None or not result.replayed:
            self._follow_undos()
            if not written_elsewhere:
                return None
            # another process on this device wrote the database (a suspension, a drill rated or
            # undone by the CLI: no note changes, so the vault watcher says nothing)
            self._cards_follow_the_database()
            return OtherDevicesReviews(0, (), ())
        for path in result.written:
            self.vault.written(path)
        self._follow_undos()  # another device's undo of a review made here
        self._cards_follow_the_database()
        return OtherDevicesReviews(self.service.store.review_count() - before, tuple(result.written),
                                   tuple(result.problems))

    def _cards_follow_the_database(self) -> None:
        """The cached cards, and the running session's queue (a note suspended elsewhere leaves
        it), as the database has them now."""
        self.vault.cards_changed()
        if self.session.active:
            self.session.requeue(keep_first=True)

    # -- today ----------------------------------------------------------------------------

    @_locked
    def today_counts(self) -> TodayCounts:
        """The figures alone, fast: only notes that can be due now get a card (`due_by`)."""
        from studyapp.cards import note_cards

        items = self.vault.cached_items
        if items is None:
            now = self.ctx.now()
            items = note_cards(self.service.store, self.service.scheduler, self.vault.notes.values(), now, due_by=now)
        return self._counts(items)

    def _counts(self, items: list[NoteCard], queue: list[NoteCard] | None = None) -> TodayCounts:
        from studyapp.cards import queue_counts
        from studyapp.review_session import todays_queue
        from studyapp.stats import reviewed_today_and_streak

        now = self.ctx.now()
        left = queue_counts(todays_queue(self.service, items) if queue is None else queue, now)
        reviewed_today, streak = reviewed_today_and_streak(self.service.store, now)
        return TodayCounts(new=left.new, learning=left.learning, review=left.review,
                           reviewed_today=reviewed_today, streak=streak, problems=len(self.vault.problems))

    @_locked
    def today(self, keep_later: bool = False) -> TodaySummary:
        """Everything the Today screen draws: every note's card (the queue and which topics have
        the most notes need them all), and the mastery of the notes in the topics shown.

        Also keeps what it worked out for the next start (the drills paired with notes, in the
        metadata cache, and the summary as `today_snapshot`); with `keep_later` that waits for
        `keep_today`, so a screen can draw first."""
        from studyapp import today_snapshot
        from studyapp.cards import LEARN_AHEAD
        from studyapp.history.eventlog import log_dir
        from studyapp.mastery import trained_drills
        from studyapp.review_session import todays_queue
        from studyapp.stats import heatmap_of, local_day, recent_reviews, reviews_per_day, top_topics_mastery

        now = self.ctx.now()
        # the key before reading: a write meanwhile voids the snapshot
        key = today_snapshot.snapshot_key(self.ctx, now, str(log_dir(self.ctx.paths, self.ctx.settings)))
        store = self.service.store
        items = self.vault.items()
        queue = todays_queue(self.service, items)
        counts = self._counts(items, queue)
        heatmap = heatmap_of(reviews_per_day(recent_reviews(store, now)), local_day(now))
        topics = top_topics_mastery(items, now, self.service.scheduler, store.drill_status(), TOPIC_ROWS,
                                    pair_ahead=self.service.vault.pair_ahead)
        wanted: list[str] = []
        for item in queue[:TODAYS_DRILL_NOTES]:
            wanted += [drill for drill in trained_drills(item.note) if drill not in wanted]
        catalog = self._drill_views()
        # the drills `due` lists too, whether or not the first notes pair with any
        due_drills = [d.id for d in self._drill_reviews().due(self.vault.notes.values())]
        wanted += [drill for drill in due_drills if drill not in wanted]
        drills = [d for d in catalog if d.id in wanted] if wanted else [d for d in catalog if d.status != "passed"]
        summary = TodaySummary(
            new=counts.new, learning=counts.learning, review=counts.review,
            reviewed_today=counts.reviewed_today, streak=counts.streak,
            heatmap={date.fromisoformat(d): n for d, n in heatmap.items()},
            drills=tuple(drills),
            mastery_by_tag=tuple(topics),
            problems=counts.problems,
            drills_due=len(due_drills),
        )
        until = today_snapshot.valid_until(items, now, LEARN_AHEAD)
        self._to_keep = (key, summary, until)
        self._today_until = min(until, self._drills_valid_until(now))
        if not keep_later:
            self.keep_today()
        return summary

    @_locked
    def keep_loaded_notes(self) -> None:
        """Write the cache rows the first load held (`LiveVault.load`) without waiting for
        Today's pairings: the app opened on another screen first."""
        if self._vault is not None:
            self._vault.release_cache_writes()

    @_locked
    def keep_today(self) -> None:
        """Save what the last `today()` worked out, for the next start (see `today`)."""
        from studyapp import today_snapshot

        if self._to_keep is None or self._vault is None:
            return
        key, summary, until = self._to_keep
        self._to_keep = None
        self.vault.remember_pairings()
        today_snapshot.save(self.ctx.paths.today_snapshot_file, key, summary, until)

    @_locked
    def today_valid_until(self) -> datetime | None:
        """The first moment after the last `today()` when its figures can change by the clock
        alone: a note or a learning step falling due, a drill falling due, or midnight (None
        before any). The app computes Today again then, when it is left open."""
        return self._today_until

    def _drills_valid_until(self, now: datetime) -> datetime:
        """The first moment after `now` when a drill falls due, or the next midnight."""
        from studyapp import today_snapshot

        dues = (card.due for card in self.service.store.drill_cards().values() if not card.suspended)
        return today_snapshot.first_due(dues, now, today_snapshot.next_midnight(now))

    def today_snapshot(self) -> TodaySummary | None:
        """What Today showed at the last start, when it is still right as far as a few `stat`
        calls can tell (`studyapp.today_snapshot`): drawn in the first frame, before the vault
        loads, then replaced by `today()`. Takes no lock (it reads one small file and nothing
        the load changes), so the UI thread can call it while the load holds the lock."""
        from studyapp import today_snapshot

        now = self.ctx.now()
        summary = today_snapshot.load(self.ctx.paths.today_snapshot_file, self.ctx, now)
        if summary is not None:
            self._snapshot_shown = True
        return summary

    # -- review session -------------------------------------------------------------------

    @_locked
    def begin_review(self) -> None:
        """Take today's queue (daily limits applied) as this session's notes."""
        self.session.begin(self.vault.items())

    @_locked
    def current_card(self) -> Card | None:
        """The note to show next, re-read first when its file changed since it was loaded."""
        session = self.session
        while (path := session.next_path) is not None:
            if self.vault.reread_if_changed(path):
                session.requeue(keep_first=True)
                if session.next_path != path:
                    continue
            card = self._card_or_left_out(path)
            if card is not None:
                return card
        return None

    def _card_or_left_out(self, path: str) -> Card | None:
        """The note's card; None when the note cannot be read whole (a byte past its head that
        is not UTF-8: the load reads heads only), after taking it out of the session and saying
        why (`left_out`): one such note stopped the session, or ended the app on a rating."""
        from studyapp.errors import UserError

        try:
            return self._card(path)
        except UserError as exc:
            self.session.drop(path)
            self._left_out.append(f"{exc}; left out of this session (`studyapp doctor` lists such notes)")
            return None

    @_locked
    def left_out(self) -> list[str]:
        """Why notes were left out of the session since the last call (each said once)."""
        lines, self._left_out = self._left_out, []
        return lines

    @_locked
    def progress(self) -> ReviewProgress:
        left, reviewed = self.session.progress()
        return ReviewProgress(new=left.new, learning=left.learning, review=left.review,
                              reviewed=reviewed, waiting=left.waiting)

    @_locked
    def summary(self) -> SessionSummary:
        tally = self.session.tally()
        return SessionSummary(reviewed=tally.reviewed, by_rating=tally.by_rating, seconds=tally.seconds)

    @_locked
    def rating_options(self, path: str) -> list[RatingOption]:
        from studyapp.schedule import interval_labels, preview

        row, _ = self.session.card_state(path)
        labels = interval_labels(preview(self.service.scheduler, row, self.ctx.now()))
        return [RatingOption(r, label, labels[label.lower()]) for r, label in RATING_LABELS.items()]

    @_locked
    def rate(self, path: str, rating: int, duration_seconds: float | None = None,
             revision: str | None = None) -> ReviewOutcome:
        """Schedule the note, write its metadata and log the review (one step, see reviews.py).

        With `revision` (the shown card's), a note that changed on disk since it was shown is
        not rated: NoteChangedOutside, and the session takes the note as it is now (a note
        rated elsewhere meanwhile leaves the session)."""
        from fsrs import Rating

        from studyapp.reviews import NotAsShown
        from studyapp.schedule import format_interval

        if revision is not None:
            note = self.vault.notes.get(path)
            title = note.title if note is not None else path
            if note is not None and not os.path.exists(note.source):  # renamed a moment ago?
                self.vault.reload_changes()  # the watcher's reload, now: the session follows
                self._follow_renames(self.vault.renames | self.service.last_moves)
                path = self._renames.get(path, path)
            self.vault.reread_if_changed(path)
            note = self.vault.notes.get(path)
            if note is None or note.content_hash != revision:
                self.session.requeue(keep_first=True)
                raise NoteChangedOutside(path, title, readable=note is not None)
        if self.suspended_now(path):  # this app leaves the notes it suspends
            note = self.vault.notes.get(path)
            self.session.requeue(keep_first=True)
            raise NoteSuspendedElsewhere(path, note.title if note is not None else path)
        try:
            # checked again under the writer lock: a `rate` in another shell may hold it now,
            # having read the note and not yet written it
            result = self.session.rate(path, Rating(rating), duration_seconds, shown=revision)
        except NotAsShown as refused:
            self.vault.reread_if_changed(path)
            note = self.vault.notes.get(path)
            self.session.requeue(keep_first=True)
            title = note.title if note is not None else path
            if refused.suspended:
                raise NoteSuspendedElsewhere(path, title) from None
            raise NoteChangedOutside(path, title, readable=note is not None) from None
        return ReviewOutcome(path, rating, format_interval(result.interval), result.due.astimezone().date())

    @_locked
    def undo(self) -> Undone | None:
        """Revert the newest change made here (a suspension, else the last recorded review, of
        a note or a drill); returns what was undone and the note to show again, or None when
        there is nothing."""
        self._follow_undos()  # first: what `u` undoes next is newer than those
        # other devices' reviews not polled yet: the undo decides on them (`undo_newest_review`
        # replays them itself), and the session's cards and notes follow them here
        self.take_other_devices_reviews()
        step = self.session.undo()
        if step is None:
            return None
        if not step.show:
            note = self.vault.notes.get(step.path)
            return Undone(step.kind, step.path,
                          step.title or (note.title if note is not None else step.path))
        card = self._card(step.path)
        return Undone(step.kind, step.path, card.title, card)

    @_locked
    def suspend(self, path: str) -> None:
        """Suspend a note (undoable with `undo`); it leaves the session at once."""
        self.session.suspend(path)

    @_locked
    def unsuspend(self, path: str) -> None:
        self.session.unsuspend(path)

    @_locked
    def suspended_now(self, path: str) -> bool:
        """Whether the note is suspended in the database now (by this app or another process)."""
        card = self.service.store.card_by_path(path)
        return card is not None and bool(card.suspended)

    @_locked
    def toggle_suspended(self, path: str) -> bool:
        """Resume the note when it is suspended now, else suspend it; returns whether it is
        suspended now. Decided from the database, not from a list drawn before: a second `s`
        before the redraw resumes, and a suspension made elsewhere is resumed too."""
        if self.suspended_now(path):
            self.session.unsuspend(path)
            return False
        self.session.suspend(path)
        return True

    @_locked
    def end_review(self) -> None:
        self.session.end()

    def note_file(self, path: str) -> Path:
        return self.ctx.paths.vault_dir / path

    @_locked
    def reload_card(self, path: str) -> Card:
        """Re-read one note (after an edit); raises with the reason when it no longer parses."""
        self.vault.reread(path)
        return self._card(path)

    @_locked
    def note_card(self, path: str) -> Card:
        """One note as the app holds it now (`notes_changed` keeps it current), without reading
        the file; KeyError when it left the vault or no longer parses."""
        return self._card(path)

    # -- notes ----------------------------------------------------------------------------

    @_locked
    def notes(self) -> tuple[list[NoteView], list[Problem]]:
        from studyapp.stats import is_topic

        rows = []
        for item in self.vault.items():
            note, card = item.note, item.card
            if item.is_new:
                next_review = None
            elif card.stability is not None or card.legacy:
                next_review = card.due.astimezone().date()
            else:
                next_review = note.next_review
            rows.append(NoteView(
                path=note.path, title=note.title, folder=note.path.rpartition("/")[0],
                tags=tuple(t for t in note.tags if is_topic(t)), next_review=next_review,
                mastery=note.mastery_level, review_count=note.review_count, suspended=bool(card.suspended),
            ))
        rows.sort(key=lambda r: r.path)
        return rows, [Problem(p.path, p.reason) for p in self.vault.problems]

    def search_notes(self, text: str, should_stop=lambda: False) -> frozenset[str]:
        """Paths of the notes whose title, path or body holds every word of `text`, ignoring case.

        Reads bodies lazily (from disk on first use after a cached load) and keeps them
        casefolded, so a search runs without the lock and later keystrokes are quick;
        `should_stop` lets a worker give up when the filter changed meanwhile.
        """
        with self._lock:
            vault = self.vault
            notes = list(vault.notes.values())
        return vault.search(notes, text, should_stop)

    # -- drills ---------------------------------------------------------------------------

    def _drill_views(self) -> list[DrillView]:
        from studyapp import drills

        store = self.service.store
        status, last = drills.status(store), drills.last_results(store)
        return [DrillView(d.id, d.title, tuple(d.tags), status.get(d.id, drills.NOT_STARTED), last.get(d.id))
                for d in drills.catalog(self.ctx.paths.drill_memo_file).values()]

    @_locked
    def drills(self) -> list[DrillView]:
        return self._drill_views()

    @_locked
    def practise_drill(self, path: str) -> str:
        """The drill to open from a note's card (its first); a UserError saying what is wrong
        when the note names only drills that do not exist, or has none."""
        from studyapp import drills
        from studyapp.errors import UserError

        card = self._card(path)
        if card.drills:
            return card.drills[0]
        if card.unknown_drills:
            raise UserError(drills.unknown_drills_message(card.title, card.unknown_drills))
        raise UserError(f"“{card.title}” has no drill: add one to its `drills:` key.")

    @_locked
    def open_drill(self, drill_id: str) -> DrillDetail:
        """The drill and the learner's file in the workspace (copied from the starter the first time)."""
        from studyapp import drills

        drill = drills.drill(drill_id)
        path, _created = drills.starter_file(drill.id, self.ctx.paths.workspace_dir)
        return DrillDetail(drill.id, drill.title, drill.statement, path, tuple(drill.hints),
                           last_verdict=self._last_verdict(drill.id))

    def _last_verdict(self, drill_id: str) -> dict | None:
        from studyapp.drills import last_attempt

        if drill_id in self._grading.last_verdicts:
            return self._grading.last_verdicts[drill_id]
        last = last_attempt(self.service.store, drill_id)
        if last is None:
            return None
        return {"status": last.verdict, "summary": last.summary, "hint": "", "checks": [],
                "attempted_at": last.day}

    def save_drill_file(self, path: Path, text: str) -> None:
        """Write the learner's code, ending with a newline as a text file does (an editor
        drops it when its last, empty line is deleted)."""
        from studyapp.atomic import atomic_write_bytes

        if text and not text.endswith("\n"):
            text += "\n"
        atomic_write_bytes(path, text.encode("utf-8"))

    def keep_workspace_copy(self, path: Path) -> Path | None:
        """Copy the drill file as it is on disk into `<workspace>/backups/` (None: no file):
        another program's save, before the learner's edits are written over it."""
        from studyapp.drill_reviews import backup_workspace_file

        return backup_workspace_file(path, self.ctx.now())

    def grade(self, drill_id: str, path: Path) -> dict:
        """Grade in the grader's worker process (never here: this process must not import torch)."""
        from studyapp.drills import is_learner_run, is_untouched_starter, record_attempt

        untouched = is_untouched_starter(drill_id, path)  # read before: the grade takes a while
        verdict, generation = self._grading.grade(drill_id, path)
        with self._lock:
            if self._grading.is_current(generation):  # a cancelled run is not an attempt
                self._grading.last_verdicts[drill_id] = verdict
                if not is_learner_run(verdict, untouched):  # the CLI's rule too
                    return verdict
                changed = record_attempt(self.service, dict(verdict, drill=drill_id, file=str(path)),
                                         notes=list(self.vault.notes.values()))
                if changed is None:  # the last run graded again (a `watch` beside the app): shown, not counted
                    verdict = self._grading.last_verdicts[drill_id] = dict(verdict, same_run=True)
                for note_path in changed or ():
                    self.vault.written(note_path)
        return verdict

    def start_grader(self) -> None:
        """Start the grader's worker process now, so the first grade waits no longer than later ones."""
        self._grading.start()

    def warm_grader(self, drill_id: str) -> None:
        """Run from a worker when a drill opens: the grader prepares that drill (`Grading.warm`)."""
        self._grading.warm(drill_id)

    def cancel_grade(self) -> None:
        self._grading.cancel()

    # -- drill reviews (drills as review items: `studyapp.drill_reviews`) ------------------

    def _drill_reviews(self):
        from studyapp.drill_reviews import DrillReviews
        from studyapp.drills import catalog

        return DrillReviews(self.service, catalog(self.ctx.paths.drill_memo_file))

    @_locked
    def due_drills(self) -> list:
        """Today's drills (`drill_reviews.DueDrill`): due ones, then new ones within the limit."""
        return self._drill_reviews().due(self.vault.notes.values())

    @_locked
    def next_due_drill(self):
        """The drill the review session shows once the notes are done (None: none is due)."""
        due = self.due_drills()
        return due[0] if due else None

    @_locked
    def begin_drill_review(self, drill_id: str):
        """Open a due (or new) drill for review: a try starts, from a fresh copy of the starter
        when the drill comes back; returns (workspace file, backup of the learner's file)."""
        return self._drill_reviews().begin(drill_id)

    @_locked
    def drill_proposal(self, drill_id: str):
        """The rating the drill's finished try earned (`drill_reviews.Proposal`), or None."""
        return self._drill_reviews().proposal(drill_id)

    @_locked
    def drill_hint(self, drill_id: str):
        """Reveal the next hint (`drill_reviews.Hint`); raises NoHintsLeft at the end."""
        return self._drill_reviews().hint(drill_id)

    @_locked
    def drill_hints_shown(self, drill_id: str) -> list:
        return self._drill_reviews().hints_shown(drill_id)

    @_locked
    def drill_give_up_question(self, drill_id: str) -> str:
        """What the app asks before giving up (`DrillReviews.give_up_question`)."""
        return self._drill_reviews().give_up_question("this drill", drill_id)

    @_locked
    def drill_give_up(self, drill_id: str) -> str:
        """Give up the try and return the reference (LookupError: none ships yet)."""
        return self._drill_reviews().give_up(drill_id)

    @_locked
    def drill_reference(self, drill_id: str) -> str | None:
        """The reference solution once the try passed or was given up, else None."""
        try:
            return self._drill_reviews().reference(drill_id)
        except LookupError:
            return None

    @_locked
    def record_drill_review(self, drill_id: str, rating: int | None = None, this_try=None):
        """Record the drill's review (`drill_reviews.DrillReviewResult`); with `this_try` (the
        proposal the screen shows), only for the try it was made for, while it waits for its
        rating (`TryAlreadyRated` otherwise: rated elsewhere, or a newer try made there)."""
        result = self._drill_reviews().record(drill_id, rating, this_try=this_try)
        if self._session is not None:
            self._session.drill_rated(drill_id)
        return result

    @_locked
    def drill_progress(self) -> list:
        """Each drill's status, next due date, passes/attempts (`drill_reviews.DrillProgress`)."""
        return self._drill_reviews().progress(self.vault.notes.values())

    @_locked
    def drills_valid_until(self) -> datetime:
        """When `drill_progress` can next change by the clock alone: a drill falling due, or
        midnight (a new day's new drills)."""
        return self._drills_valid_until(self.ctx.now())

    @_locked
    def drill_retention_by_week(self) -> tuple[tuple[date, float], ...]:
        """The drills' retention curve, next to the notes' on Stats."""
        return self._drill_reviews().retention_by_week()

    # -- stats ----------------------------------------------------------------------------

    @_locked
    def stats(self) -> StatsData:
        from studyapp.stats import compute_stats, drill_history, top_topics, weekly_retention

        now = self.ctx.now()
        store = self.service.store
        stats = compute_stats(store, self.service.scheduler, self.vault.items(), now,
                              pair_ahead=self.service.vault.pair_ahead)
        self.vault.remember_pairings()
        return StatsData(
            heatmap={date.fromisoformat(d): n for d, n in stats.reviews_per_day.items()},
            forecast=tuple((date.fromisoformat(d), n) for d, n in stats.forecast),
            retention=tuple((f"{r.days}d", r.retention) for r in stats.retention),
            retention_by_week=tuple(weekly_retention(store, now)),
            mastery_by_tag=tuple(top_topics(stats.mastery_by_tag, TOPIC_ROWS)),
            drill_history=tuple(drill_history(store)),
            counts_by_state=dict(stats.counts_by_state),
        )

    # -- lifetime -------------------------------------------------------------------------

    def close(self) -> None:
        self._grading.close()
        if self._vault is not None:
            self._vault.close()
        if self._service is not None:
            self._service.close()
            self._service = None
