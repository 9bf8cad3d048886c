"""The one small interface the TUI talks to: vault, scheduler, statistics and grader behind
methods that return `studyapp.views` objects.

Torch-free and Textual-free. Screens call it from workers and from the UI thread, so every
public method holds one lock; domain modules are imported on first use to keep start-up light.
"""

from __future__ import annotations

import os
import threading
from collections import Counter, defaultdict
from dataclasses import replace
from datetime import date, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING

from studyapp.views import (
    RATING_LABELS,
    Card,
    DrillDetail,
    DrillInfo,
    NoteChangedOutside,
    NoteRow,
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

    from studyapp.context import Context
    from studyapp.grader.client import GraderClient
    from studyapp.reviews import ReviewService
    from studyapp.session import QueueCounts

NO_LIMIT = 10**9
"""Inside a started session the daily limits were already applied when it was built."""
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


def _is_topic(tag: str) -> bool:
    """The users' previous tool adds the note's own path as a tag; that is not a topic."""
    return not tag.lower().endswith((".md", ".markdown", ".txt"))


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


def _new_grader_client(timeout: float, memory_mb: int) -> GraderClient:
    from studyapp.grader.client import GraderClient
    from studyapp.grader.contract import GradeLimits

    return GraderClient(GradeLimits(timeout=timeout, memory_mb=memory_mb))


class StudyFacade:
    """One learner's vault, review history and grader for the lifetime of the app."""

    def __init__(self, ctx: Context, make_grader: Callable[..., GraderClient] | None = None) -> None:
        self.ctx = ctx
        self.make_grader = make_grader or _new_grader_client
        """Builds the grader client from `timeout` and `memory_mb` (tests pass a fake)."""
        self._lock = threading.RLock()
        self._service: ReviewService | None = None
        self._notes: dict = {}
        self._problems: list = []
        self._items_cache = None
        self._session: list[str] = []
        self._session_set: set[str] = set()
        self._history: list[tuple[str, int]] = []
        self._undo: list[tuple[UndoKind, str, bool]] = []
        """What `undo` reverts, newest last: (kind, note path, was in the session)."""
        self._session_started = datetime.now()
        self._folded: dict[str, tuple[str, str]] = {}
        """Casefolded note text by path, with the content hash it was read at (`search_notes`)."""
        self._left: QueueCounts | None = None
        """`session.QueueCounts` of the running session, kept with its order."""
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
        """Open the database and the scheduler (no note file is read); `load` does it too."""
        from studyapp.reviews import ReviewService

        if self._service is None:
            self._service = ReviewService(self.ctx)

    @_locked
    def cached_counts(self) -> TodayCounts | None:
        """Today's figures from the metadata cache as the last load left it, without scanning
        the vault: shown while `load` runs, then replaced. None without a usable cache, or
        once the vault is loaded (the real figures are as cheap then)."""
        from studyapp.cached_vault import read_cached_vault
        from studyapp.session import note_cards

        if self._notes or self._problems:
            return None
        self.open()
        cached = read_cached_vault(self.ctx.paths.cache_file, self.ctx.paths.vault_dir)
        if cached is None:
            return None
        now = self.ctx.now()
        items = note_cards(self.service.store, self.service.scheduler, cached.notes, now, due_by=now)
        return replace(self._counts(self.service.queue(items)), problems=cached.problems)

    @_locked
    def load(self) -> tuple[int, int]:
        """Open the database and load the vault (warm loads only stat files); returns (notes, problems)."""
        self.open()
        snap = self.service.load()
        self._notes = {note.path: note for note in snap.notes}
        self._problems = list(snap.problems)
        self._items_cache = None
        return len(self._notes), len(self._problems)

    @property
    def service(self):
        if self._service is None:
            raise RuntimeError("the vault is not loaded yet")
        return self._service

    def _items(self):
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
        from studyapp.session import derive_card, never_reviewed

        store = self.service.store
        row = store.note_by_path(path)
        stored = store.card(row.key) if row is not None else None
        if stored is not None and not never_reviewed(stored):
            return stored, False
        return derive_card(self._notes[path], row.key if row else None, self.service.scheduler, self.ctx.now())

    def _drills_of(self, note) -> tuple[str, ...]:
        if note.drills:
            return tuple(note.drills)
        if "drills" in note.meta:  # declared empty: the learner said "none"
            return ()
        try:
            from studyapp.pairing import drills_for
        except ImportError:
            return ()
        return tuple(drills_for(note.meta, f"{note.title}\n{note.body}").drills)

    def _card(self, path: str, is_new: bool | None = None) -> Card:
        note = self._notes[path]
        if is_new is None:
            is_new = self._card_row(path)[1]
        from studyapp.note_text import review_texts

        answer, body = review_texts(note.title, note.body or "", note.answer or "")
        return Card(path=path, title=note.title, answer=answer, body=body,
                    drills=self._drills_of(note), is_new=is_new, revision=note.content_hash)

    def _reread_if_changed(self, path: str) -> bool:
        """Re-read one note when its file changed since it was read (a stat, and a read only
        when size or time differ); returns whether the note changed or vanished."""
        note = self._notes.get(path)
        if note is None:
            return False
        try:
            st = os.stat(self.note_file(path))
        except OSError:
            self._forget(path)
            return True
        if st.st_size == note.size and st.st_mtime_ns == note.mtime_ns:
            return False
        try:
            fresh = self.service.vault.read_note(path)
        except Exception:  # noqa: BLE001 - broken now: it leaves the session until fixed
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
        self._session_set.discard(path)
        self._session = [p for p in self._session if p != path]

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
            if edited and self._session_set:
                self._requeue(keep_first=True)
            return edited
        before = {path: note.content_hash for path, note in self._notes.items()}
        broken_before = {p.path for p in self._problems}
        self.load()
        after = {path: note.content_hash for path, note in self._notes.items()}
        changed = {path for path in before.keys() | after.keys() if before.get(path) != after.get(path)}
        changed |= broken_before ^ {p.path for p in self._problems}
        if changed and self._session_set:
            self._session_set &= after.keys()
            self._requeue(keep_first=True)
        return tuple(sorted(changed))

    # -- today ----------------------------------------------------------------------------

    @_locked
    def today_counts(self) -> TodayCounts:
        """The figures alone, fast: only notes that can be due now get a card (`due_by`)."""
        from studyapp.session import note_cards

        if self._items_cache is not None:
            items = self._items_cache
        else:
            now = self.ctx.now()
            items = note_cards(self.service.store, self.service.scheduler, self._notes.values(), now, due_by=now)
        return self._counts(self.service.queue(items))

    def _counts(self, queue) -> TodayCounts:
        from studyapp.session import queue_counts
        from studyapp.stats import local_day, recent_reviews, reviews_per_day, streak_ending

        now = self.ctx.now()
        per_day = reviews_per_day(recent_reviews(self.service.store, now))
        today = local_day(now)
        left = queue_counts(queue, now)
        return TodayCounts(
            new=left.new,
            learning=left.learning,
            review=left.review,
            reviewed_today=per_day.get(today, 0),
            streak=streak_ending(per_day, today),
            problems=len(self._problems),
        )

    @_locked
    def today(self) -> TodaySummary:
        """Everything the Today screen draws (every note's card: mastery needs them all)."""
        from studyapp.stats import compute_stats

        items = self._items()
        queue = self.service.queue(items)
        counts = self._counts(queue)
        stats = compute_stats(self.service.store, self.service.scheduler, items, self.ctx.now())
        heatmap = {date.fromisoformat(d): n for d, n in stats.reviews_per_day.items()}
        wanted: list[str] = []
        for item in queue[:TODAYS_DRILL_NOTES]:
            for drill in self._drills_of(item.note):
                if drill not in wanted:
                    wanted.append(drill)
        catalog = self._drill_infos()
        if wanted:
            drills = [d for d in catalog if d.id in wanted]
        else:
            drills = [d for d in catalog if d.status != "passed"]
        return TodaySummary(
            new=counts.new,
            learning=counts.learning,
            review=counts.review,
            reviewed_today=counts.reviewed_today,
            streak=counts.streak,
            heatmap=heatmap,
            drills=tuple(drills),
            mastery_by_tag=self._topics(stats.mastery_by_tag),
            problems=counts.problems,
        )

    @staticmethod
    def _topics(by_tag: dict[str, dict[str, float]]) -> tuple[tuple[str, float], ...]:
        topics = [(tag, info) for tag, info in by_tag.items() if _is_topic(tag)]
        topics.sort(key=lambda t: (-t[1]["notes"], t[0]))
        return tuple((tag, float(info["mastery"])) for tag, info in topics[:TOPIC_ROWS])

    # -- review session -------------------------------------------------------------------

    @_locked
    def begin_review(self) -> None:
        """Take today's queue (daily limits applied) as this session's notes."""
        from studyapp.session import queue_counts

        queue = self.service.queue(self._items())
        self._session = [item.note.path for item in queue]
        self._session_set = set(self._session)
        self._left = queue_counts(queue, self.ctx.now())
        self._history = []
        self._session_started = datetime.now()

    def _requeue(self, first: str | None = None, keep_first: bool = False) -> None:
        """Order the session's notes again: rated notes leave, an "again" comes back after the rest.
        `keep_first` keeps the note on screen in front when it is still due."""
        shown = self._session[0] if keep_first and self._session else None
        from studyapp.session import note_cards, queue_counts, session_queue

        service = self.service
        notes = [self._notes[p] for p in self._session_set if p in self._notes]
        notes.sort(key=lambda n: n.path)
        items = note_cards(service.store, service.scheduler, notes, self.ctx.now())
        order = session_queue(items, service.scheduler, self.ctx.now(), NO_LIMIT, NO_LIMIT)
        self._session = [item.note.path for item in order]
        self._left = queue_counts(order, self.ctx.now())
        if first is not None:
            self._session = [first] + [p for p in self._session if p != first]
        elif shown is not None and shown in self._session:
            self._session = [shown] + [p for p in self._session if p != shown]

    @_locked
    def current_card(self) -> Card | None:
        """The note to show next, re-read first when its file changed since it was loaded."""
        while self._session:
            path = self._session[0]
            if not self._reread_if_changed(path):
                return self._card(path)
            self._requeue(keep_first=True)
            if self._session and self._session[0] == path:
                return self._card(path)
        return None

    @_locked
    def progress(self) -> ReviewProgress:
        from studyapp.session import QueueCounts

        left = self._left or QueueCounts()
        return ReviewProgress(new=left.new, learning=left.learning, review=left.review,
                              reviewed=len(self._history), waiting=left.waiting)

    @_locked
    def summary(self) -> SessionSummary:
        counts = Counter(rating for _, rating in self._history)
        seconds = (datetime.now() - self._session_started).total_seconds()
        return SessionSummary(reviewed=len(self._history), by_rating=dict(counts), seconds=seconds)

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
                self._requeue(keep_first=True)
                raise NoteChangedOutside(path, title, readable=note is not None)
        result = self.service.record_review(path, Rating(rating), duration_seconds)
        self._history.append((path, rating))
        self._undo.append((UndoKind.RATING, path, True))
        self._changed(path)
        self._session_set.add(path)
        self._requeue()
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
            self._session_set.add(path)
            self._requeue(first=path)
            card = self._card(path)
            return Undone(UndoKind.SUSPENSION, path, card.title, card)
        if self.service.store.last_review() is None:
            return None
        info = self.service.undo_last()
        path = info["path"]
        if self._undo and self._undo[-1][:2] == (UndoKind.RATING, path):
            self._undo.pop()
        for i in range(len(self._history) - 1, -1, -1):
            if self._history[i][0] == path:
                del self._history[i]
                break
        self._changed(path)
        if path not in self._notes:
            return Undone(UndoKind.RATING, path, path)
        self._session_set.add(path)
        self._requeue(first=path)
        card = self._card(path)
        return Undone(UndoKind.RATING, path, card.title, card)

    @_locked
    def suspend(self, path: str) -> None:
        """Suspend a note (undoable with `undo`); it leaves the session at once."""
        if self.service.set_suspended(path, True):
            self._undo.append((UndoKind.SUSPENSION, path, path in self._session_set))
        self._session_set.discard(path)
        self._items_cache = None
        self._requeue()

    @_locked
    def unsuspend(self, path: str) -> None:
        self.service.set_suspended(path, False)
        self._undo = [u for u in self._undo if u[:2] != (UndoKind.SUSPENSION, path)]
        self._items_cache = None

    @_locked
    def end_review(self) -> None:
        self._session, self._session_set, self._left = [], set(), None

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
    def notes(self) -> tuple[list[NoteRow], list[Problem]]:
        rows = []
        for item in self._items():
            note = item.note
            card = item.card
            if item.is_new:
                next_review = None
            elif card.stability is not None or card.legacy:
                next_review = card.due.astimezone().date()
            else:
                next_review = note.next_review
            rows.append(NoteRow(
                path=note.path, title=note.title, folder=note.path.rpartition("/")[0],
                tags=tuple(t for t in note.tags if _is_topic(t)), next_review=next_review,
                mastery=note.mastery_level, review_count=note.review_count, suspended=bool(card.suspended),
            ))
        rows.sort(key=lambda r: r.path)
        problems = [Problem(p.path, p.reason) for p in self._problems]
        return rows, problems

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

    def _catalog(self) -> list:
        """The drills' torch-free descriptions (`kernels/catalog.py`); empty if kernels/ lacks one."""
        from studyapp.kernels_loader import load_kernels

        load_kernels()
        try:
            from studyapp_kernels.catalog import CATALOG
        except ImportError:
            return []
        return list(CATALOG.values())

    def _drill_infos(self) -> list[DrillInfo]:
        store = self.service.store
        status = store.drill_status()
        last: dict[str, str] = {}
        for row in store.drill_attempts():
            last[row.drill_id] = f"{row.verdict}: {row.summary}" if row.summary else row.verdict
        return [DrillInfo(d.id, d.title, tuple(d.tags), status.get(d.id, "not started"), last.get(d.id))
                for d in self._catalog()]

    @_locked
    def drills(self) -> list[DrillInfo]:
        return self._drill_infos()

    @_locked
    def open_drill(self, drill_id: str) -> DrillDetail:
        """The drill and the learner's file in the workspace (copied from the starter the first time)."""
        drill = next((d for d in self._catalog() if d.id == drill_id), None)
        if drill is None:
            from studyapp.errors import UserError

            raise UserError(f"unknown drill {drill_id!r}")
        path = self.ctx.paths.workspace_dir / f"{drill.id}.py"
        if not path.exists():  # never overwrite the learner's work
            from studyapp.atomic import atomic_write_bytes

            path.parent.mkdir(parents=True, exist_ok=True)
            atomic_write_bytes(path, drill.starter_path.read_bytes())
        return DrillDetail(drill.id, drill.title, drill.statement, path, tuple(drill.hints),
                           last_verdict=self._last_verdict(drill.id))

    def _last_verdict(self, drill_id: str) -> dict | None:
        if drill_id in self._last_verdicts:
            return self._last_verdicts[drill_id]
        rows = self.service.store.drill_attempts(drill_id)
        if not rows:
            return None
        last = rows[-1]
        day = last.attempted_at.astimezone().date()
        return {"status": last.verdict, "summary": last.summary, "hint": "", "checks": [],
                "attempted_at": day.isoformat()}

    def save_drill_file(self, path: Path, text: str) -> None:
        """Write the learner's code, ending with a newline as a text file does (an editor
        drops it when its last, empty line is deleted)."""
        from studyapp.atomic import atomic_write_bytes

        if text and not text.endswith("\n"):
            text += "\n"
        atomic_write_bytes(path, text.encode("utf-8"))

    def grade(self, drill_id: str, path: Path) -> dict:
        """Grade in the grader's worker process (never here: this process must not import torch)."""
        client = self._grader_client()
        with self._lock:
            generation = self._grade_generation
        verdict = client.grade(drill_id, path, device="auto")
        with self._lock:
            if generation == self._grade_generation:  # a cancelled run is not an attempt
                self._last_verdicts[drill_id] = verdict
                self._record_attempt(drill_id, path, verdict)
        return verdict

    def _grader_client(self):
        """The one grader client of this run, built from the settings the first time."""
        with self._grader_lock:
            if self._grader is None:
                settings = self.ctx.settings
                self._grader = self.make_grader(timeout=settings.grader_timeout,
                                                memory_mb=settings.grader_memory_mb)
            return self._grader

    def start_grader(self) -> None:
        """Start the grader's worker process now (it imports torch there, not here), so the
        first grade of the session waits no longer than later ones."""
        with self._grader_lock:
            if self._closed:
                return
            self._grader_client().start()

    def _record_attempt(self, drill_id: str, path: Path, verdict: dict) -> None:
        """Log the attempt; when the drill's status changes, the notes listing it get their
        `mastery_level` rewritten (mastery counts passed drills)."""
        changed = self.service.record_drill_result(
            dict(verdict, drill=drill_id, file=str(path)), notes=list(self._notes.values()))
        for note_path in changed:
            self._changed(note_path)

    def cancel_grade(self) -> None:
        with self._lock:
            self._grade_generation += 1
        if self._grader is not None:
            self._grader.cancel()

    # -- stats ----------------------------------------------------------------------------

    @_locked
    def stats(self) -> StatsData:
        from studyapp.stats import compute_stats

        now = self.ctx.now()
        store = self.service.store
        stats = compute_stats(store, self.service.scheduler, self._items(), now)
        return StatsData(
            heatmap={date.fromisoformat(d): n for d, n in stats.reviews_per_day.items()},
            forecast=tuple((date.fromisoformat(d), n) for d, n in stats.forecast),
            retention=tuple((f"{r.days}d", r.retention) for r in stats.retention),
            retention_by_week=self._weekly_retention(now),
            mastery_by_tag=self._topics(stats.mastery_by_tag),
            drill_history=self._drill_history(),
            counts_by_state=dict(stats.counts_by_state),
        )

    def _weekly_retention(self, now: datetime) -> tuple[tuple[date, float], ...]:
        """True retention per week (Monday-dated) over the last half year, weeks with reviews only."""
        from fsrs import Rating, State

        weeks: dict[date, list[int]] = defaultdict(lambda: [0, 0])
        for row in self.service.store.reviews(since=now - timedelta(weeks=26)):
            if row.state_before != State.Review:
                continue
            day = row.reviewed_at.astimezone().date()
            monday = day - timedelta(days=day.weekday())
            weeks[monday][0] += 1
            weeks[monday][1] += row.rating != Rating.Again
        return tuple((week, passed / total) for week, (total, passed) in sorted(weeks.items()))

    def _drill_history(self) -> tuple[tuple[date, int, int], ...]:
        days: dict[date, list[int]] = defaultdict(lambda: [0, 0])
        for row in self.service.store.drill_attempts():
            day = row.attempted_at.astimezone().date()
            days[day][0 if row.verdict == "pass" else 1] += 1
        return tuple((day, p, f) for day, (p, f) in sorted(days.items()))[-14:]

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
