"""Recording reviews: the note file and the database change together or not at all.

A review (and an undo) is written in three steps, holding the vault's write lock throughout
(one writer at a time across processes: a second `rate` waits, then starts from the first one's
result):
  1. a journal row saying what is about to happen, and which process is doing it, is committed;
  2. the note file is rewritten atomically (the vault's byte-exact write-back);
  3. the review is appended to this device's log (`studyapp.history`), then the review rows
     are written and the journal row removed, in one transaction.
A crash between 2 and 3 leaves a journal row, which `review_journal.repair_pending` (run
whenever a service opens) finishes or drops. `studyapp due`'s listing is here too, until the
review session has a module of its own (issue 11).

~660 lines on purpose: every write to a note and the history (rate, undo, suspend, drill
results, renames) goes through this one service and its lock, so the order of those writes
can be checked in one file.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from fsrs import Rating

from studyapp import schedule
from studyapp.cards import (
    NoteCard,
    derive_card,
    never_reviewed,
    note_cards,
    session_queue,
)
from studyapp.errors import UserError
from studyapp.identity import HOP_SUFFIX, has_vanished, reconcile_identity
from studyapp.locking import WriterLock, current_process
from studyapp.mastery import note_mastery, trained_drills
from studyapp.review_journal import (
    finish_review,
    finish_undo,
    json_values,
    present_values,
    repair_pending,
    undo_values,
)
from studyapp.store import CardRow, Store, utc_text
from studyapp.vault.model import MAX_REVIEW_COUNT, REVIEW_KEYS, WriteConflict
from studyapp.vault.parse import decode
from studyapp.vault.vault import content_hash
from studyapp.vault.writeback import ABSENT, NO_BLOCK, Written, same_meaning, written_tokens

OWNED_REVIEW_KEYS = REVIEW_KEYS


class NotAsShown(UserError):
    """A review refused: the note is no longer the one the learner judged. It changed on disk
    (an editor, a sync, a review another process recorded) or was suspended since it was shown."""

    def __init__(self, path: str, suspended: bool) -> None:
        super().__init__(f"{path}: {'suspended' if suspended else 'changed'} since it was shown; not rated")
        self.path = path
        self.suspended = suspended


@dataclass
class ReviewResult:
    """What one recorded review did (the CLI prints it, the TUI posts it)."""

    path: str
    rating: str
    review_id: int
    due: datetime
    state: str
    interval: timedelta
    mastery: float
    event_id: str | None = None
    """The review's event in the log: how a session knows its rating was undone elsewhere."""


class ReviewService:
    """The vault, the database and the scheduler for one run; the TUI keeps one open."""

    def __init__(self, ctx, vault=None, store: Store | None = None):
        from studyapp.vault import Vault

        self.ctx = ctx
        self.vault = vault or Vault(ctx.paths.vault_dir, cache_file=ctx.paths.cache_file)
        self.store = store or Store.open(ctx.paths)
        self.writer_lock = WriterLock(ctx.paths.writer_lock_file)
        from studyapp.history.sync import event_log

        self.history_log = event_log(ctx)
        # as of when the settings were read, not now: a log moved in between is followed
        self._config_mtime = (ctx.settings_mtime_ns if ctx.settings_mtime_ns is not None
                              else _mtime_ns(ctx.paths.config_file))
        from studyapp.vault_binding import serve_this_vault

        self.served, bound_lines = serve_this_vault(ctx, self.store, self.writer_lock)
        # after: a database that served another vault held that vault's fitted parameters
        self.scheduler = schedule.scheduler_for(ctx, self.store)
        self.writer_lock.on_acquire = self._on_lock
        self.last_moves: dict[str, str] = {}
        """{old path: new path} of the renames the latest `reconcile` found (a front end's
        session follows its notes by them)."""
        self.moved: dict[str, tuple[str, datetime]] = {}
        """{new path: (old path, time of its MOVE)} of the renames this service logged: an
        event of the new path must not sort before its move (`move_time`)."""
        self.repaired = bound_lines + repair_pending(self.store, self.vault, self.writer_lock,
                                                     self.history_log)
        self.synced = self.sync(wait=False)
        if ctx.report is not None:
            for line in self.startup_lines():
                ctx.report(line)

    def _on_lock(self) -> None:
        from studyapp.vault_binding import check_still_served

        check_still_served(self.store, self.served)
        self._follow_the_log()

    def _follow_the_log(self) -> None:
        """`studyapp history-log` may have moved this device's log while this process waited
        for the writer lock (it moves it holding the lock): appending to the old place would put
        the review where nothing reads it. So each write first reads the setting again, when
        config.toml changed since it was read."""
        mtime = _mtime_ns(self.ctx.paths.config_file)
        if mtime == self._config_mtime:
            return
        self._config_mtime = mtime
        from studyapp.config import load_settings
        from studyapp.history.sync import event_log

        try:
            place = load_settings(self.ctx.paths.config_file).history_log
        except Exception:  # noqa: BLE001 - a config broken meanwhile: keep what this run started with
            return
        if place != self.ctx.settings.history_log:
            self.ctx.settings.history_log = place
            self.history_log = event_log(self.ctx)

    def close(self) -> None:
        self.store.close()

    def __enter__(self) -> ReviewService:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def sync(self, wait: bool = True, force: bool = False):
        """Bring the cache and the notes up to every device's log (`history.sync.catch_up`);
        call it when the log folder changed. Without `wait`, skipped while another process
        writes (it syncs itself)."""
        from studyapp.history.sync import SyncResult, catch_up

        if wait:
            with self.writer_lock.hold():
                return catch_up(self, force)
        with self.writer_lock.attempt() as held:
            return catch_up(self, force) if held else SyncResult()

    def log_changed(self) -> bool:
        """Whether some device's log file differs from what the cache holds (one `stat` per
        file): a front end polls this, or watches the folder, and calls `sync` when true."""
        return self.history_log.sizes() != self.store.log_sizes()

    def startup_lines(self) -> list[str]:
        """What opening this service repaired or could not do, one line each: interrupted
        writes finished or dropped, notes the replay could not rewrite. Every front end
        shows them (the CLI on stderr, the TUI as a notification)."""
        return [*self.repaired, *self.synced.problems]

    def _log(self, kind, path: str | None, at: datetime, **data):
        from studyapp.history.events import new_event
        from studyapp.history.sync import record

        event = new_event(kind, at, self.history_log.device, path, **data)
        record(self.store, self.history_log, event)
        return event

    # -- reading --------------------------------------------------------------------------

    def load(self):
        """Load the vault and carry note identities across renames; returns the snapshot."""
        snap = self.vault.load()
        self.reconcile(snap)
        return snap

    def reconcile(self, snap) -> dict[str, str]:
        """Carry note identities across renames and log each as a MOVE event: a replay (another
        device, `sync --full`, a rebuilt database) knows only the log. Checked again under the
        writer lock, so a second process noticing the same rename logs nothing. {old: new}."""
        self.last_moves = {}
        problems = [p.path for p in snap.problems]
        if not has_vanished(self.store, snap.notes, problems):
            return {}
        with self.writer_lock.hold():
            return self.reconcile_held(snap)

    def reconcile_held(self, snap) -> dict[str, str]:
        """`reconcile` for a caller that holds the writer lock (a replay, before it writes the
        notes' keys: a note the log names may have moved while the log was away)."""
        from studyapp.history.events import EventKind, new_event
        from studyapp.history.sync import record

        problems = [p.path for p in snap.problems]
        with self.store.transaction():
            now = self.ctx.now()
            moves = reconcile_identity(self.store, snap.notes, problems, now)
            if moves:
                device = self.history_log.device
                logged = self.history_log.read().events
                events, at = [], now
                for old, new in moves.items():  # in order, never earlier than the one before (a swap's hops)
                    at = max(at, move_time(logged, old, device, now))
                    events.append(new_event(EventKind.MOVE, at, device, old, to=new))
                record(self.store, self.history_log, *events)
                for old, event in zip(moves, events):
                    self.moved.pop(old, None)
                    self.moved[event.data["to"]] = (old, event.at)
                self.last_moves = settled_moves(moves)
        return moves

    def note_cards(self, notes) -> list[NoteCard]:
        return note_cards(self.store, self.scheduler, notes, self.ctx.now())

    def queue(self, items: list[NoteCard]) -> list[NoteCard]:
        """Today's session queue with the daily limits applied."""
        now = self.ctx.now()
        # today's local day, midnight to midnight (a review stamped later is not today's)
        new_done, reviews_done = self.store.reviews_started_since(
            schedule.day_start(now), until=schedule.next_day_start(now))
        settings = self.ctx.settings
        return session_queue(items, self.scheduler, now,
                             new_left=settings.new_per_day - new_done,
                             reviews_left=settings.reviews_per_day - reviews_done)

    # -- recording ------------------------------------------------------------------------

    def record_review(self, path: str, rating: Rating | str,
                      duration_seconds: float | None = None, shown: str | None = None) -> ReviewResult:
        """Rate the note at `path` now: schedule it, write its owned keys, log the review.

        Holds the write lock, so a review recorded meanwhile by another process is the starting
        point (its review count, its card), not overwritten. With `shown` (the content hash of
        the note the learner judged, in the app), a note that is no longer that one, or was
        suspended since, is not rated (`NotAsShown`): checked under the lock, since a `rate`
        in another shell may have read the note and not yet written it when the app asked."""
        if isinstance(rating, str):
            rating = schedule.parse_rating(rating)
        with self.writer_lock.hold():
            return self._record_review(path, rating, duration_seconds, shown)

    def _record_review(self, path: str, rating: Rating,
                       duration_seconds: float | None, shown: str | None = None) -> ReviewResult:
        now = self.ctx.now()
        note = self.vault.read_note(path)
        row = self.store.note_by_path(path)
        key = row.key if row else None
        stored = self.store.card(key) if key is not None else None
        if shown is not None and (note.content_hash != shown or (stored is not None and stored.suspended)):
            raise NotAsShown(path, suspended=note.content_hash == shown)
        # A row only a suspension stored does not schedule: the note is still new (or legacy).
        scheduled = stored if stored is not None and not never_reviewed(stored) else None
        before = scheduled or derive_card(note, key, self.scheduler, now)[0]
        if stored is not None:
            before.suspended = stored.suspended
        is_new = scheduled is None and before.stability is None
        refuse_earlier_than(now, path, scheduled.last_review if scheduled else None,
                            note.last_reviewed)
        self._refuse_before_move(now, path)
        duration_ms = None if duration_seconds is None else schedule.recorded_duration_ms(duration_seconds * 1000)
        from studyapp.history.events import EventKind, local_offset, logged_before, new_event, review_days
        from studyapp.history.replay import (
            card_fields,
            review_for_event,
            scheduler_fingerprint,
        )

        kept = present_values(note.meta, note.has_block)
        event = new_event(
            EventKind.REVIEW, now, self.history_log.device, path, rating=int(rating),
            duration_ms=duration_ms, title=note.title, fuzz=self.scheduler.enable_fuzzing,
            utc_offset=local_offset(now), **({} if scheduled else {"seed": before.to_json()}),
            **logged_before(kept))
        after = review_for_event(self.scheduler, before, rating, now, duration_ms, event.id)
        event.data.update(before=card_fields(before), after=card_fields(after),
                          sched=scheduler_fingerprint(self.scheduler),
                          due_utc_offset=local_offset(after.due))
        refuse_unloggable(event, path)  # before the note: a review the log refuses changes nothing
        value = note_mastery(note, after, now, self.scheduler, self.store.drill_status())
        # the days in the reviewer's offsets, as every device's replay writes them (`sync`)
        today, next_day = review_days(now, after.due, event.data["utc_offset"],
                                      event.data["due_utc_offset"])
        file_values = {
            "last_reviewed": today,
            "next_review": next_day,
            "review_count": min(note.review_count + 1, MAX_REVIEW_COUNT),  # a note at the limit stays there
            "mastery_level": value,
        }
        review_row = {
            "rating": int(rating),
            "reviewed_at": utc_text(now),
            "duration_ms": duration_ms,
            "state_before": None if is_new else before.state,
            "state_after": after.state,
            "stability_before": before.stability,
            "stability_after": after.stability,
            "difficulty_before": before.difficulty,
            "difficulty_after": after.difficulty,
            "due_before": None if is_new else utc_text(before.due),
            "due_after": utc_text(after.due),
            "scheduled_days": (after.due - now).total_seconds() / 86400,
            "elapsed_days": (None if before.last_review is None
                             else (now - before.last_review).total_seconds() / 86400),
            "card_before": stored.to_json() if stored else None,
            "file_values_before": json.dumps(kept, default=str),
            "path": path,
            "hash_before": note.content_hash,
            "utc_offset": event.data["utc_offset"],
        }
        payload: dict[str, Any] = {"review": review_row, "card_after": after.to_json(), "title": note.title,
                   "file_values": json_values(file_values), "owner": current_process().as_text(),
                   "event": event.to_json()}
        self.history_log.check_writable()  # before the note: a review the log cannot hold changes nothing
        entry = self.store.add_journal("review", path, note.content_hash, None, payload, now)
        try:
            written = self.vault.rewrite_review_keys(note, file_values)
        except BaseException:
            self.store.clear_journal(entry)
            raise
        payload["review"]["hash_before"] = content_hash(written.replaced)
        tokens = _unusual_tokens(written.replaced)
        if tokens:  # so that an undo replayed on another device writes them back as they were
            event.data["tokens_before"] = tokens
            payload["event"] = event.to_json()
        review_id = finish_review(self.store, entry, payload, written.note.content_hash,
                                   written.replaced, now, self.history_log)
        return ReviewResult(path, schedule.rating_name(rating), review_id, after.due,
                            _state_name(after.state), after.due - now, value, event.id)

    def _refuse_before_move(self, now: datetime, path: str) -> None:
        """A review at `now` would sort before the move this service logged for `path` (its old
        path has a later event, a suspension say), and the replay would lose the history."""
        old, moved_at = self.moved.get(path, (None, None))
        if moved_at is not None and now < moved_at:
            raise UserError(f"{path} (renamed from {old}) has history up to "
                            f"{moved_at.astimezone().isoformat(timespec='minutes')}, after the "
                            f"time given ({now.astimezone().isoformat(timespec='minutes')}); "
                            "a review cannot be recorded before it")

    def undo_last(self, review=None) -> dict:
        """Revert the most recent review (or `review`, this device's newest: see
        `drill_reviews.undo_newest_review`): the note's bytes and the database rows.

        The exact old bytes come back when the note is unchanged since the review; if it was
        edited meanwhile, only the owned keys get their old values (the edit is kept); if even
        that cannot be done safely, nothing changes and UserError says why.
        """
        with self.writer_lock.hold():
            return self._undo_last(review)

    def _still_as_reviewed(self, path: str, hash_after: str | None) -> bool:
        """Whether the file at `path` is still the one a review left there (or, without the
        review's hash, is there at all). An unreadable one is taken as there: the undo then
        says why it cannot read it."""
        import stat as stat_module

        from studyapp.vault.scan import size_problem

        file = self.vault.root / path
        try:
            status = file.stat()
            if not stat_module.S_ISREG(status.st_mode) or size_problem(status.st_size):
                return True  # a FIFO would block the read; the undo's own read says what it is
            raw = file.read_bytes()
        except FileNotFoundError:
            return False
        except OSError:
            return True
        return hash_after is None or content_hash(raw) == hash_after

    def _gone(self, row) -> str:
        """Why the undo of a review of `row`, a note no longer in the vault, cannot be done: its
        file is gone, or its path holds a file that is not that note (emptied by a crashed
        editor or a sync, or another note written there). Putting the note back undoes it."""
        from studyapp.textwidth import shown

        gone = f"cannot undo: the reviewed note {row.path} is no longer in the vault"
        file = self.vault.root / row.path
        try:
            empty = not file.read_bytes().strip()
            there = None if empty else self.vault.read_note(row.path).title
        except (OSError, UserError):
            return gone
        reviewed = f"“{shown(row.title)}”" if row.title else "the note reviewed there"
        now = "is empty now" if empty else f"holds another note now, “{shown(there or '')}”"
        return (f"cannot undo: {row.path} {now}, not {reviewed}; put that note's text back at "
                f"{row.path} to undo its review")

    def _undo_last(self, review) -> dict:
        if review is None:
            last = self.store.last_review()
            if last is None:
                raise UserError("nothing to undo: no review has been recorded")
        else:  # chosen by the caller: still there, and still the note's newest?
            last = self.store.review_by_id(review.id)
            if last is None or last.event_id != review.event_id:
                raise UserError("nothing to undo: that review was undone meanwhile")
        note_row = self.store.note_by_key(last.note_key)
        assert note_row is not None, "a review's note_key always names a notes row"
        if note_row.deleted or not self._still_as_reviewed(note_row.path, last.hash_after):
            # gone from its path, or another file there (`mv b.md b-archive.md`, then a new
            # b.md), and nothing has loaded the vault since: follow (and log) a rename; or
            # marked gone, and maybe put back since (an emptied note's text restored)
            self.reconcile(self.vault.load())
            note_row = self.store.note_by_key(last.note_key)
            assert note_row is not None, "reconciling renames or marks rows, never removes them"
        path = note_row.path
        if note_row.deleted:  # first: no device could undo it, so sending the user to one would mislead
            raise UserError(self._gone(note_row))
        if review is not None:
            refuse_if_reviewed_since(self.store, last)
        if last.file_values_before is None:  # replayed, beyond `replay.UNDO_REACH`
            raise UserError(f"cannot undo the review of {path} on {utc_text(last.reviewed_at)[:10]}: "
                            "it is older than what undo reaches")
        note = self.vault.read_note(path)
        old_bytes = self.store.undo_bytes(last.id)
        old_values = undo_values(last.file_values_before)
        if old_values.get(NO_BLOCK) and last.path:  # the block it gave came from its path then
            old_values[NO_BLOCK] = last.path
        if old_bytes is not None:  # an empty value goes back as the user wrote it (`key:`, `~`)
            tokens = written_tokens(decode(old_bytes)[0])
            old_values.update({k: tokens[k] for k, v in old_values.items()
                               if k in tokens and same_meaning(k, tokens[k], v)})
        exact = old_bytes is not None and note.content_hash == last.hash_after
        if not exact and last.card_before is not None and old_values.get("mastery_level", ABSENT) is not ABSENT:
            under = CardRow.from_json(last.card_before)
            if under.last_review is not None:  # a review stands under it (another device's, maybe):
                # the mastery that one leaves, as every device's replay of this undo writes it
                old_values["mastery_level"] = note_mastery(note, under, under.last_review, self.scheduler,
                                                           self.store.drill_status())
        from studyapp.history.events import EventKind, new_event

        event = None if last.event_id is None else new_event(
            EventKind.UNDO, self.ctx.now(), self.history_log.device, path,
            review=last.event_id)
        undo_event = None if event is None else event.to_json()
        written = {k: None if v is ABSENT else v.means if isinstance(v, Written) else v  # as a read finds it
                   for k, v in old_values.items() if k != NO_BLOCK}
        payload = {"review_id": last.id, "file_values": json_values(written),
                   "owner": current_process().as_text(), "event": undo_event}
        if event is not None:
            refuse_unloggable(event, path)
            self.history_log.check_writable()  # before the note, as a review does
        entry = self.store.add_journal("undo", path, note.content_hash, None, payload,
                                       self.ctx.now())
        try:
            if exact and old_bytes is not None and last.hash_after is not None:  # exact implies both were kept
                try:
                    self.vault.restore_bytes(path, old_bytes, last.hash_after)
                    new_hash = content_hash(old_bytes)
                except WriteConflict:  # edited this very instant: keep the edit
                    exact = False
            if not exact:
                note = self.vault.read_note(path)
                new_hash = self.vault.write_review_keys(note, old_values).content_hash
        except BaseException:
            self.store.clear_journal(entry)
            raise
        finish_undo(self.store, entry, last.id, new_hash, undo_event, self.history_log)
        return {"path": path, "rating": schedule.rating_name(last.rating),
                "reviewed_at": utc_text(last.reviewed_at), "exact": exact,
                "bytes_kept": old_bytes is not None}

    def record_drill_result(self, verdict: dict, notes=None) -> list[str] | None:
        """Log one graded submission (a grader verdict with "drill" and "file") at `ctx.now()`;
        when it changes the drill's status, refresh the mastery of the notes paired with the
        drill. Returns the paths of the notes rewritten; None, recording nothing, when it is the
        drill's last run graded again (`drills.repeats_last_run`, decided under the lock)."""
        with self.writer_lock.hold():
            return self._record_drill_result(verdict, notes)

    def _record_drill_result(self, verdict: dict, notes) -> list[str] | None:
        drill_id = verdict["drill"]
        from studyapp.drills import repeats_last_run, run_outcome
        from studyapp.history.events import EventKind

        before = self.store.drill_status().get(drill_id)
        seconds = verdict.get("seconds")
        outcome = run_outcome(verdict)
        duration_ms = schedule.recorded_duration_ms(seconds * 1000) if isinstance(seconds, (int, float)) else None
        with self.store.transaction():
            if repeats_last_run(self.store, verdict):
                return None
            event = self._log(EventKind.DRILL, None, self.ctx.now(), drill=drill_id,
                              verdict=outcome, summary=verdict.get("summary", ""),
                              duration_ms=duration_ms, file=str(verdict.get("file", "")))
            self.store.record_drill_attempt(
                drill_id, outcome, summary=verdict.get("summary", ""),
                file_path=str(verdict.get("file", "")), duration_ms=duration_ms,
                attempted_at=self.ctx.now(), event_id=event.id,
                source_sha256=verdict.get("source_sha256") or None, device=verdict.get("device"))
        if self.store.drill_status().get(drill_id) == before:
            return []
        return self.refresh_mastery(drill_id, notes=notes)

    def refresh_mastery(self, drill_id: str, notes=None) -> list[str]:
        """After a drill result: rewrite `mastery_level` of the reviewed notes that `drill_id`
        trains (`mastery.trained_drills`: declared, else suggested); a never-reviewed note's
        mastery is 0 whatever its drills, so it is never written. Returns their paths.
        (Call after `Store.record_drill_attempt`.)"""
        with self.writer_lock.hold():
            return self._refresh_mastery(drill_id, notes)

    def _refresh_mastery(self, drill_id: str, notes) -> list[str]:
        notes = self.load().notes if notes is None else notes
        status = self.store.drill_status()
        now = self.ctx.now()
        reviewed = [item for item in self.note_cards([n for n in notes if n.has_block])
                    if not item.is_new]
        trained = [item for item in reviewed if drill_id in trained_drills(item.note)]
        self.vault.remember_pairings([item.note for item in reviewed])
        changed = []
        for item in trained:
            value = note_mastery(item.note, item.card, now, self.scheduler, status)
            if item.note.mastery_level is not None and abs(item.note.mastery_level - value) < 5e-4:
                continue
            try:
                self.vault.write_review_keys(self.vault.read_note(item.note.path),
                                             {"mastery_level": value})
            except (UserError, OSError):  # gone, unreadable, a link to another note: the next
                continue  # review writes its mastery; one such note does not stop the others
            changed.append(item.note.path)
        return changed

    def set_suspended(self, path: str, suspended: bool) -> bool:
        """Suspend or unsuspend a note; returns whether the flag changed. Suspended notes are
        never due (the file is not touched: suspension lives in the database).

        Unsuspending restores exactly the state from before the suspension: a note no review
        has scheduled loses the card row the suspension stored, so it is new (or migrated from
        its metadata) again, within the daily new limit.
        """
        from studyapp.history.events import EventKind

        note = self.vault.read_note(path)
        now = self.ctx.now()
        kind = EventKind.SUSPEND if suspended else EventKind.UNSUSPEND
        # allowed at any time (it does not schedule), but never before the note's move
        at = max(now, self.moved.get(path, (None, now))[1])
        with self.writer_lock.hold(), self.store.transaction():
            key = self._ensure_note(note, now)
            card = self.store.card(key)
            if card is None:
                if not suspended:
                    return False
                card = derive_card(note, key, self.scheduler, now)[0]
                self._log(kind, path, at, seed=card.to_json())
                card.suspended = True
                self.store.put_card(card)
                return True
            if card.suspended == suspended:
                return False
            self._log(kind, path, at)
            if not suspended and not self.store.has_reviews(key):
                self.store.delete_card(key)
            else:
                self.store.set_suspended(key, suspended)
            return True

    def _ensure_note(self, note, now: datetime) -> int:
        row = self.store.note_by_path(note.path)
        if row is not None:
            return row.key
        return self.store.add_note(note.path, note.content_hash, note.title, now)


def settled_moves(moves: Mapping[str, str]) -> dict[str, str]:
    """{old: final path} of `reconcile_identity`'s moves, through a swap's `#moving` hops."""
    settled = {}
    for old, new in moves.items():
        if old.endswith(HOP_SUFFIX):
            continue
        while new.endswith(HOP_SUFFIX) and new in moves:
            new = moves[new]
        settled[old] = new
    return settled


def move_time(logged, old: str, device: str, now: datetime) -> datetime:
    """When to log the rename of `old`: `now`, unless that sorts before an event already logged
    for `old` (a refused `rate` at an earlier `--now`, a device whose clock is behind); the
    replay (by time, then device, then file order) would then credit that event to a path that
    no longer exists. So the move sorts after the latest one: at its instant when the
    tie-break already puts it after (this device's own event, or a lower device id), else 1 µs
    later. Not later than that: a review of the new path at that same frozen `--now` must
    still sort after the move."""
    latest = max(((e.at, e.device) for e in logged if _is_of_path(e, old)), default=None)
    if latest is None or latest[0] < now:
        return now
    at, other = latest
    return at if device >= other else at + timedelta(microseconds=1)


def _is_of_path(event, path: str) -> bool:
    """An event that a replay credits to whatever note is at `path` at its time (an undo only
    names the review it reverts, whose time is what counts)."""
    from studyapp.history.events import EventKind

    if event.kind is EventKind.MOVE:
        return event.note == path or event.data.get("to") == path
    return event.note == path and event.kind is not EventKind.UNDO


def refuse_earlier_than(now: datetime, path: str, last_review: datetime | None,
                       last_reviewed_day=None) -> None:
    """The clock cannot go backwards: a review at `now` before the note's last review would
    schedule from the past. `last_review` is the database's instant of it, and decides when
    there is one: the note's `last_reviewed` is a day in the reviewer's zone, which after a
    flight west (or a review on a device further east) is a later day than here although the
    review is hours past. Only a note no stored review scheduled goes by that day."""
    if last_review is not None:
        if now >= last_review:
            return
        when = last_review.astimezone().isoformat(timespec="minutes")
    elif last_reviewed_day is not None and now.astimezone().date() < last_reviewed_day:
        when = last_reviewed_day.isoformat()
    else:
        return
    raise UserError(f"{path} was last reviewed {when}, after the time given "
                    f"({now.astimezone().isoformat(timespec='minutes')}); "
                    "a review cannot be recorded before the previous one")


def refuse_unloggable(event, path: str) -> None:
    """UserError, before anything is written, for an event the review log would refuse (a
    clock whose UTC day is out of the log's range): it could never be logged, so the note must
    not be written either."""
    from studyapp.history.events import BadEvent, Event

    try:
        Event.from_json(event.to_json())
    except BadEvent as exc:
        when = event.at.astimezone().isoformat(timespec="minutes")
        raise UserError(f"the {event.kind.value} of {path} at {when} cannot be recorded: the "
                        f"review log cannot hold its event ({exc})") from None


def _state_name(state: int) -> str:
    from fsrs import State

    return State(state).name.lower()


def refuse_if_reviewed_since(store: Store, review) -> None:
    """UserError when another device reviewed the note after `review`: taking this one back
    would rewind the note under that device's review (undo it on that device first)."""
    newest = store.last_review_of(review.note_key)
    if newest is not None and newest.id != review.id:
        row = store.note_by_key(review.note_key)
        path = row.path if row is not None else review.path
        raise UserError(f"cannot undo this device's review of {path}: another device reviewed it "
                        f"since ({newest.reviewed_at.astimezone():%Y-%m-%d %H:%M}); undo that "
                        "review on that device first. Nothing was changed")


def _unusual_tokens(raw: bytes) -> dict[str, str]:
    from studyapp.vault.parse import NoteFormatError, decode
    from studyapp.vault.writeback import unusual_tokens

    try:
        return unusual_tokens(decode(raw)[0])
    except NoteFormatError:
        return {}


def _mtime_ns(path) -> int | None:
    try:
        return os.stat(path).st_mtime_ns
    except OSError:
        return None
