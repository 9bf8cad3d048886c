"""What the TUI needs on top of the core: one lock, the loaded vault kept current as files
change, and every answer mapped to a `studyapp.views` object.

The numbers and decisions come from the services the CLI calls too (`review_session`,
`drills`, `stats`, `mastery`, `reviews`); this module only holds them together for a
long-running app. Torch-free and Textual-free. Screens call it from workers and from the UI
thread, so every public method holds the lock; domain modules are imported on first use to
keep start-up light.
"""

from __future__ import annotations

import os
import threading
from dataclasses import replace
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING

from studyapp.views import (
    RATING_LABELS,
    Card,
    DrillDetail,
    DrillView,
    NoteChangedOutside,
    NoteView,
    Problem,
    RatingOption,
    ReviewOutcome,
    ReviewProgress,
    SessionSummary,
    StatsData,
    TodayCounts,
    TodaySummary,
    UndoKind,
    Undone,
)

if TYPE_CHECKING:
    from collections.abc import Callable

    from studyapp.cards import NoteCard
    from studyapp.context import Context
    from studyapp.grader.client import GraderClient
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


def _read_body(note) -> str | None:
    """A note's body, read without keeping it on the note (`search_notes` keeps only the
    casefolded copy: a 10,000-note vault would otherwise hold its text twice)."""
    if "body" in note.__dict__:
        return note.body
    from studyapp.vault.parse import NoteFormatError, decode, find_layout

    try:
        text, _bom = decode(note.abs_path.read_bytes())
        return text[find_layout(text).body_start:]
    except (OSError, NoteFormatError):
        return None


def _new_grader(ctx: Context) -> GraderClient:
    from studyapp.drills import new_grader_client

    return new_grader_client(ctx.settings)


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
        self._notes: dict = {}
        self._problems: list = []
        self._items_cache: list[NoteCard] | None = None
        self._session: ReviewSession | None = None
        self._undo: list[tuple[UndoKind, str, bool]] = []
        """What `undo` reverts, newest last: (kind, note path, was in the session)."""
        self._folded: dict[str, tuple[str, str]] = {}
        """Casefolded note text by path, with the content hash it was read at (`search_notes`)."""
        self._grader: GraderClient | None = None
        self._grader_lock = threading.RLock()
        """Guards building, starting and closing the grader client (not held while grading)."""
        self._closed = False
        """Set by `close`: a background start that comes later starts nothing."""
        self._grade_generation = 0
        """Bumped by `cancel_grade`; a grade that started before the bump is not recorded."""
        self._last_verdicts: dict[str, dict] = {}
        """The latest full verdict of each drill graded during this run (the store keeps summaries)."""

    # -- loading --------------------------------------------------------------------------

    @_locked
    def open(self) -> None:
        """Open the database and the scheduler (no note file is read); `load` does it too.
        Repairs of crashed writes happen here (`startup_messages` says what they did)."""
        from studyapp.review_session import ReviewSession
        from studyapp.reviews import ReviewService

        if self._service is None:
            self._service = ReviewService(self.ctx)
            self._session = ReviewSession(self._service, self._notes)

    @_locked
    def startup_messages(self) -> tuple[str, ...]:
        """What opening the history repaired or could not do (`ReviewService.startup_lines`)."""
        return tuple(self._service.startup_lines()) if self._service is not None else ()

    @_locked
    def cached_counts(self) -> TodayCounts | None:
        """Today's figures from the metadata cache as the last load left it, without scanning
        the vault: shown while `load` runs, then replaced. None without a usable cache, or
        once the vault is loaded (the real figures are as cheap then)."""
        from studyapp.cached_vault import read_cached_vault
        from studyapp.cards import note_cards

        if self._notes or self._problems:
            return None
        self.open()
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
        snap = self.service.load()
        self._notes.clear()  # the session holds this very mapping
        self._notes.update((note.path, note) for note in snap.notes)
        self._problems = list(snap.problems)
        self._items_cache = None
        return len(self._notes), len(self._problems)

    @property
    def service(self) -> ReviewService:
        if self._service is None:
            raise RuntimeError("the vault is not loaded yet")
        return self._service

    @property
    def session(self) -> ReviewSession:
        if self._session is None:
            raise RuntimeError("the vault is not loaded yet")
        return self._session

    def _items(self) -> list[NoteCard]:
        """Every note with its card; cached until something is rated, undone or suspended."""
        if self._items_cache is None:
            self._items_cache = self.service.note_cards(list(self._notes.values()))
        return self._items_cache

    def _changed(self, path: str) -> None:
        self._items_cache = None
        try:
            self._notes[path] = self.service.vault.read_note(path)
        except Exception:  # noqa: BLE001 - the note vanished or broke; it stays as last read
            pass

    def _card_row(self, path: str):
        from studyapp.cards import derive_card, never_reviewed

        store = self.service.store
        row = store.note_by_path(path)
        stored = store.card(row.key) if row is not None else None
        if stored is not None and not never_reviewed(stored):
            return stored, False
        return derive_card(self._notes[path], row.key if row else None, self.service.scheduler, self.ctx.now())

    def _card(self, path: str, is_new: bool | None = None) -> Card:
        from studyapp.mastery import trained_drills, unknown_drills
        from studyapp.note_text import review_texts

        note = self._notes[path]
        if is_new is None:
            is_new = self._card_row(path)[1]
        answer, body = review_texts(note.title, note.body or "", note.answer or "")
        return Card(path=path, title=note.title, answer=answer, body=body,
                    drills=trained_drills(note), unknown_drills=unknown_drills(note),
                    is_new=is_new, revision=note.content_hash)

    def _reread_if_changed(self, path: str) -> bool:
        """Re-read one note when its file changed since it was read (a stat, and a read only
        when size or time differ); returns whether the note changed or vanished."""
        note = self._notes.get(path)
        if note is None:
            return False
        if self._same_on_disk(path):
            return False
        try:
            fresh = self.service.vault.read_note(path)
        except Exception:  # noqa: BLE001 - gone or broken now: it leaves the session until fixed
            self._forget(path)
            return True
        self._notes[path] = fresh
        self._items_cache = None
        return fresh.content_hash != note.content_hash

    def _reread_edited(self, paths) -> tuple[str, ...] | None:
        """Re-read notes edited in place; None when any path is not such a note (new, gone or
        unreadable), which needs a whole load to sort out."""
        if not all(path in self._notes for path in paths):
            return None
        fresh = {}
        for path in paths:
            try:
                fresh[path] = self.service.vault.read_note(path)
            except Exception:  # noqa: BLE001 - gone or broken: the whole load reports it
                return None
        changed = tuple(sorted(p for p, note in fresh.items() if note.content_hash != self._notes[p].content_hash))
        self._notes.update(fresh)
        if changed:
            self._items_cache = None
        return changed

    def _same_on_disk(self, path: str) -> bool:
        note = self._notes.get(path)
        try:
            st = os.stat(self.note_file(path))
        except OSError:
            return False
        return note is not None and st.st_size == note.size and st.st_mtime_ns == note.mtime_ns

    def _forget(self, path: str) -> None:
        self._notes.pop(path, None)
        self._items_cache = None
        self.session.drop(path, requeue=False)

    @_locked
    def notes_changed(self, paths) -> tuple[str, ...]:
        """Files changed outside the app (the vault watcher saw them): re-read the notes that
        were edited, or, when notes appeared, vanished or broke, load the vault again (warm
        loads only stat unchanged files, but that is still ~0.4 s at 10,000 notes); then take
        the session's notes as they are now. Returns the paths of notes that were added,
        removed or changed, or became unreadable."""
        if self._service is None or all(self._same_on_disk(path) for path in paths):
            return ()  # the echo of the app's own writes
        edited = self._reread_edited(paths)
        if edited is not None:
            if edited and self.session.active:
                self.session.requeue(keep_first=True)
            return edited
        before = {path: note.content_hash for path, note in self._notes.items()}
        broken_before = {p.path for p in self._problems}
        self.load()
        after = {path: note.content_hash for path, note in self._notes.items()}
        changed = {path for path in before.keys() | after.keys() if before.get(path) != after.get(path)}
        changed |= broken_before ^ {p.path for p in self._problems}
        if changed:
            self.session.keep_only(after)
        return tuple(sorted(changed))

    # -- today ----------------------------------------------------------------------------

    @_locked
    def today_counts(self) -> TodayCounts:
        """The figures alone, fast: only notes that can be due now get a card (`due_by`)."""
        from studyapp.cards import note_cards

        items = self._items_cache
        if items is None:
            now = self.ctx.now()
            items = note_cards(self.service.store, self.service.scheduler, self._notes.values(), now, due_by=now)
        return self._counts(items)

    def _counts(self, items: list[NoteCard], queue: list[NoteCard] | None = None) -> TodayCounts:
        from studyapp.cards import queue_counts
        from studyapp.review_session import todays_queue
        from studyapp.stats import reviewed_today_and_streak

        now = self.ctx.now()
        left = queue_counts(todays_queue(self.service, items) if queue is None else queue, now)
        reviewed_today, streak = reviewed_today_and_streak(self.service.store, now)
        return TodayCounts(new=left.new, learning=left.learning, review=left.review,
                           reviewed_today=reviewed_today, streak=streak, problems=len(self._problems))

    @_locked
    def today(self) -> TodaySummary:
        """Everything the Today screen draws (every note's card: mastery needs them all)."""
        from studyapp.mastery import trained_drills
        from studyapp.review_session import todays_queue
        from studyapp.stats import compute_stats, top_topics

        items = self._items()
        queue = todays_queue(self.service, items)
        counts = self._counts(items, queue)
        stats = compute_stats(self.service.store, self.service.scheduler, items, self.ctx.now())
        wanted: list[str] = []
        for item in queue[:TODAYS_DRILL_NOTES]:
            wanted += [drill for drill in trained_drills(item.note) if drill not in wanted]
        catalog = self._drill_views()
        drills = [d for d in catalog if d.id in wanted] if wanted else [d for d in catalog if d.status != "passed"]
        return TodaySummary(
            new=counts.new, learning=counts.learning, review=counts.review,
            reviewed_today=counts.reviewed_today, streak=counts.streak,
            heatmap={date.fromisoformat(d): n for d, n in stats.reviews_per_day.items()},
            drills=tuple(drills),
            mastery_by_tag=tuple(top_topics(stats.mastery_by_tag, TOPIC_ROWS)),
            problems=counts.problems,
        )

    # -- review session -------------------------------------------------------------------

    @_locked
    def begin_review(self) -> None:
        """Take today's queue (daily limits applied) as this session's notes."""
        self.session.begin(self._items())

    @_locked
    def current_card(self) -> Card | None:
        """The note to show next, re-read first when its file changed since it was loaded."""
        session = self.session
        while (path := session.next_path) is not None:
            if not self._reread_if_changed(path):
                return self._card(path)
            session.requeue(keep_first=True)
            if session.next_path == path:
                return self._card(path)
        return None

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

        row, _ = self._card_row(path)
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

        from studyapp.schedule import format_interval

        if revision is not None:
            note = self._notes.get(path)
            title = note.title if note is not None else path
            self._reread_if_changed(path)
            note = self._notes.get(path)
            if note is None or note.content_hash != revision:
                self.session.requeue(keep_first=True)
                raise NoteChangedOutside(path, title, readable=note is not None)
        result = self.service.record_review(path, Rating(rating), duration_seconds)
        self._undo.append((UndoKind.RATING, path, True))
        self._changed(path)
        self.session.rated(path, rating)
        return ReviewOutcome(path, rating, format_interval(result.interval), result.due.astimezone().date())

    @_locked
    def undo(self) -> Undone | None:
        """Revert the newest change made here (a suspension, else the last recorded review);
        returns what was undone and the note to show again, or None when there is nothing."""
        if self._undo and self._undo[-1][0] is UndoKind.SUSPENSION:
            _, path, in_session = self._undo.pop()
            self.service.set_suspended(path, False)
            self._changed(path)
            if not in_session or path not in self._notes:
                return Undone(UndoKind.SUSPENSION, path, self._notes[path].title if path in self._notes else path)
            self.session.bring_back(path)
            card = self._card(path)
            return Undone(UndoKind.SUSPENSION, path, card.title, card)
        if self.service.store.last_review() is None:
            return None
        path = self.service.undo_last()["path"]
        if self._undo and self._undo[-1][:2] == (UndoKind.RATING, path):
            self._undo.pop()
        self._changed(path)
        self.session.unrated(path)
        if path not in self._notes:
            return Undone(UndoKind.RATING, path, path)
        self.session.bring_back(path)
        card = self._card(path)
        return Undone(UndoKind.RATING, path, card.title, card)

    @_locked
    def suspend(self, path: str) -> None:
        """Suspend a note (undoable with `undo`); it leaves the session at once."""
        if self.service.set_suspended(path, True):
            self._undo.append((UndoKind.SUSPENSION, path, path in self.session.members))
        self._items_cache = None
        self.session.drop(path)

    @_locked
    def unsuspend(self, path: str) -> None:
        self.service.set_suspended(path, False)
        self._undo = [u for u in self._undo if u[:2] != (UndoKind.SUSPENSION, path)]
        self._items_cache = None

    @_locked
    def end_review(self) -> None:
        self.session.end()

    def note_file(self, path: str) -> Path:
        return self.ctx.paths.vault_dir / path

    @_locked
    def reload_card(self, path: str) -> Card:
        """Re-read one note (after an edit); raises with the reason when it no longer parses."""
        self._notes[path] = self.service.vault.read_note(path)
        self._items_cache = None
        return self._card(path)

    # -- notes ----------------------------------------------------------------------------

    @_locked
    def notes(self) -> tuple[list[NoteView], list[Problem]]:
        from studyapp.stats import is_topic

        rows = []
        for item in self._items():
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
        return rows, [Problem(p.path, p.reason) for p in self._problems]

    def search_notes(self, text: str, should_stop=lambda: False) -> frozenset[str]:
        """Paths of the notes whose text (title or body) contains `text`, ignoring case.

        Reads bodies lazily (from disk on first use after a cached load) and keeps them
        casefolded, so a search runs without the lock and later keystrokes are quick;
        `should_stop` lets a worker give up when the filter changed meanwhile.
        """
        needle = text.casefold()
        with self._lock:
            notes = list(self._notes.values())
        hits = set()
        for note in notes:
            if should_stop():
                break
            folded = self._folded.get(note.path)
            if folded is None or folded[0] != note.content_hash:
                body = _read_body(note)
                if body is None:
                    continue  # unreadable now: not a match
                folded = self._folded[note.path] = (note.content_hash, f"{note.title}\n{body}".casefold())
            if needle in folded[1]:
                hits.add(note.path)
        return frozenset(hits)

    # -- drills ---------------------------------------------------------------------------

    def _drill_views(self) -> list[DrillView]:
        from studyapp import drills

        store = self.service.store
        status, last = drills.status(store), drills.last_results(store)
        return [DrillView(d.id, d.title, tuple(d.tags), status.get(d.id, drills.NOT_STARTED), last.get(d.id))
                for d in drills.catalog().values()]

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

        if drill_id in self._last_verdicts:
            return self._last_verdicts[drill_id]
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

    def grade(self, drill_id: str, path: Path) -> dict:
        """Grade in the grader's worker process (never here: this process must not import torch)."""
        from studyapp.drills import record_attempt

        client = self._grader_client()
        with self._lock:
            generation = self._grade_generation
        verdict = client.grade(drill_id, path, device="auto", timeout=self.ctx.settings.grader_timeout)
        with self._lock:
            if generation == self._grade_generation:  # a cancelled run is not an attempt
                self._last_verdicts[drill_id] = verdict
                changed = record_attempt(self.service, dict(verdict, drill=drill_id, file=str(path)),
                                         notes=list(self._notes.values()))
                for note_path in changed:
                    self._changed(note_path)
        return verdict

    def _grader_client(self) -> GraderClient:
        """The one grader client of this run, built the first time it is needed."""
        with self._grader_lock:
            if self._grader is None:
                self._grader = self.make_grader(self.ctx)
            return self._grader

    def start_grader(self) -> None:
        """Start the grader's worker process now (it imports torch there, not here), so the
        first grade of the session waits no longer than later ones."""
        with self._grader_lock:
            if self._closed:
                return
            self._grader_client().start()

    def cancel_grade(self) -> None:
        with self._lock:
            self._grade_generation += 1
        if self._grader is not None:
            self._grader.cancel()

    # -- stats ----------------------------------------------------------------------------

    @_locked
    def stats(self) -> StatsData:
        from studyapp.stats import compute_stats, drill_history, top_topics, weekly_retention

        now = self.ctx.now()
        store = self.service.store
        stats = compute_stats(store, self.service.scheduler, self._items(), now)
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
        with self._grader_lock:  # waits for a start in flight, so its process is stopped too
            self._closed = True
            grader, self._grader = self._grader, None
        if grader is not None:
            grader.close()
        if self._service is not None:
            self._service.close()
            self._service = None
