"""Keep the database cache and the notes' owned keys up to the log.

`catch_up` runs when a review service opens and whenever the front end sees the log folder
change: when every device's file is as long as the cache last saw it, it costs one `stat` per
file; otherwise every event is replayed into the database and each reviewed note whose owned
keys disagree with the replayed state is rewritten (so a note put back by a sync tool, or a git
merge resolved either way, is corrected). The days written are the reviewer's own (its UTC
offsets, kept in the event), so devices in two time zones write the same values.

~550 lines on purpose: the replay, the settle rule for notes ahead of the log and the
write-back of owned keys decide together what a note says; split, they would disagree.
"""

from __future__ import annotations

import errno
import gc
import json
import os
import time
from collections.abc import Callable
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import date, datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING

from studyapp import schedule
from studyapp.errors import UserError
from studyapp.history.eventlog import EventLog, log_dir, vault_log
from studyapp.history.events import Event, EventKind, logged_before, new_event
from studyapp.identity import another_note
from studyapp.mastery import note_mastery
from studyapp.store import CardRow, ReviewRow, Store, utc_text
from studyapp.store_rows import R_EVENT_ID, R_NOTE_KEY

if TYPE_CHECKING:  # replaying (hashlib, random, FSRS's internals) is imported when a log changed
    from studyapp.history.replay import NoteHistory, Replayed


def device_id(paths) -> str:
    """This device's id: the data dir's (`<data dir>/data-dir.json`), made on first use.

    Where the marker cannot be written (markers are advice, never a reason to fail), an id
    derived from the host and the data dir's place stands in: stable from run to run."""
    from studyapp.markers import (
        DataDirMarker,
        create_marker,
        read_data_dir_marker,
        this_host,
    )

    marker = read_data_dir_marker(paths.data_dir_marker)
    if marker is None:  # made only if absent: commands started at once agree on the id
        marker, written = create_marker(paths.data_dir_marker, DataDirMarker.new(), read_data_dir_marker)
        if not written:
            import uuid

            return uuid.uuid5(uuid.NAMESPACE_URL, f"{this_host()}:{paths.data_dir}").hex
    return marker.id


def event_log(ctx) -> EventLog:
    """This device's view of the log folder the settings choose."""
    return EventLog(log_dir(ctx.paths, ctx.settings), device_id(ctx.paths))


def first_use_notice(ctx) -> str | None:
    """Said once, when the vault's log folder is first made: where the history now lives."""
    if ctx.settings.history_log != "vault":
        return None
    folder = vault_log(ctx.paths)
    if folder.exists() or not ctx.paths.vault_dir.is_dir():
        return None
    try:
        folder.mkdir(parents=True)
    except OSError:
        return None
    return (f"the review history is kept in the vault ({folder}, one file per device), so it "
            "travels with your notes; `studyapp history-log data-dir` keeps it on this machine "
            "instead")


def record(store: Store, events_log: EventLog, *events: Event) -> None:
    """Append this device's events, and let the cache know it already holds them (unless
    another change to the file is pending: the next `catch_up` replays it)."""
    try:
        size_before = events_log.own_file.stat().st_size
    except FileNotFoundError:
        size_before = 0
    end = events_log.append(*events)
    if store.log_sizes().get(events_log.device, 0) == size_before:
        store.set_log_size(events_log.device, end)


@dataclass
class SyncResult:
    """What one `catch_up` did."""

    replayed: int = 0
    """Distinct events replayed (0: the cache was up to date)."""
    adopted: int = 0
    """Reviews of an older database written into the log for the first time."""
    written: list[str] = field(default_factory=list)
    """Notes whose owned keys were rewritten to the replayed state."""
    problems: list[str] = field(default_factory=list)
    moved: bool = False
    """Renames were logged while the notes were written (`write_owned_keys`)."""
    offsets: dict[int, tuple[int, int | None]] = field(default_factory=dict, repr=False)
    """The reviewer's UTC offsets (`utc_offset`, `due_utc_offset`) of each note's last
    standing review, by the note's index in the replay, where its event records them: the days
    `write_owned_keys` writes (`events.review_days`)."""


def catch_up(service, force: bool = False) -> SyncResult:
    """Replay the log into the cache when any device's file changed; the caller holds the
    writer lock."""
    with _no_cycle_collection():
        return _catch_up(service, force)


@contextmanager
def _no_cycle_collection():
    """A replay makes hundreds of thousands of objects and no reference cycles: the cycle
    collector, run every few hundred allocations, only re-walks them (a third of a rebuild)."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def _catch_up(service, force: bool) -> SyncResult:
    store, events_log = service.store, service.history_log
    result = SyncResult()
    sizes, cached = events_log.sizes(), store.log_sizes()
    shrunk = {device for device, size in cached.items() if sizes.get(device, 0) < size}
    logged = {e.id for e in events_log.read().events} if shrunk else None
    # Written back with another device's file among those that shrank or went, the reviews may
    # be that device's: marked so (`ADOPTED`), none is taken back by this device's `undo`, whose
    # own may then be among them (a loss of an undo, not of another device's review).
    result.adopted = adopt_database(store, events_log, service.ctx.now(), logged,
                                    for_others=any(not events_log.named_own(d) for d in shrunk))
    if not force and not result.adopted and sizes == cached:
        return result
    # only the recheck row asked for this replay: the log is as the last one read it, and
    # that one already said what it left out (said once, not on every command until it settles)
    recheck_only = (not force and not result.adopted and RECHECK in cached
                    and sizes == {d: n for d, n in cached.items() if d != RECHECK})
    from studyapp.history.replay import replay

    contents = events_log.read()
    replayed = replay(contents.events, service.ctx.settings)
    keys = _note_keys(store, replayed, service.ctx.now(), service.vault)
    cards = []
    for index, history in enumerate(replayed.notes):
        if history.card is not None and index in keys:
            history.card.note_key = keys[index]
            cards.append(history.card)
    result.offsets = review_offsets(contents.events, replayed)  # rows still name notes by index
    rows = [r for r in replayed.reviews if r[R_NOTE_KEY] in keys]
    for row in rows:
        row[R_NOTE_KEY] = keys[row[R_NOTE_KEY]]
    with store.bulk_transaction():  # notes and drills change together
        # no log sizes yet: they mark the cache up to date, which it is once the notes are too
        store.replace_replayed(cards, rows, replayed.attempts, replayed.params, {})
        store.replace_replayed_drills(replayed.drill_cards, replayed.drill_reviews,
                                      replayed.drill_marks)
    service.scheduler = schedule.scheduler_for(service.ctx, store)
    result.replayed = replayed.events
    if not recheck_only:
        result.problems.extend(contents.problems(events_log.folder))
    if replayed.malformed and not recheck_only:
        result.problems.append(f"{replayed.malformed} event(s) of the review log left out, as "
                               "the replay could not use them")
    write_owned_keys(service, replayed, result)
    sizes = dict(contents.sizes)
    if result.moved:  # the renames it logged are this device's own lines, already replayed
        sizes[events_log.device] = events_log.sizes().get(events_log.device, 0)
    with store.transaction():  # a replay cut short before this is done again next time
        for device, size in sizes.items():
            store.set_log_size(device, size)
    return result


def _note_keys(store: Store, replayed: Replayed, now: datetime, vault=None) -> dict[int, int]:
    """Database key of each live note identity: its live row, else the row of the note a load
    found deleted at its path (it stays deleted, with its history: the log knows no deletions,
    and a replay that gave it a live row again brought a long-deleted note back, one more row
    per replay, for the next load to take for a new note with its title); a note the database
    never saw gets a row."""
    def live_keys() -> dict[str, int]:
        found: dict[str, int] = {}
        for row in store.live_notes():  # one query, not one per note
            found.setdefault(row.path, row.key)
        return found

    live, deleted = live_keys(), _deleted_keys(store)
    claimed = {h.path for h in replayed.notes if h.live}
    for history in replayed.notes:  # a move this database has not seen: its row follows it
        if history.live and history.path not in live:
            old = next((p for p in reversed(history.former) if p in live and p not in claimed), None)
            if old is not None:
                store.update_note(live[old], path=history.path)
                live[history.path] = live.pop(old)
    missing = {h.path: h.title for h in replayed.notes
               if h.live and h.path not in live and h.path not in deleted}
    if missing:
        store.add_notes(list(missing.items()), now)
        live = live_keys()
        if vault is not None:  # a note only suspended has no title in the log: its file tells it
            _identify_from_files(store, vault, [(live[path], path) for path, title in missing.items()
                                                if title is None and path in live])
    gone = {h.path: h.title for h in replayed.notes  # a note another one replaced at its path
            if not h.live and h.reviews and h.path not in deleted}
    if gone:
        store.add_notes(list(gone.items()), now, deleted=True)  # its reviews still count
        deleted = _deleted_keys(store)
    keys = {index: live.get(history.path) or deleted[history.path]
            for index, history in enumerate(replayed.notes) if history.live}
    keys.update((index, deleted[history.path]) for index, history in enumerate(replayed.notes)
                if not history.live and history.reviews)
    return keys


def _identify_from_files(store: Store, vault, rows: list[tuple[int, str]]) -> None:
    """Give the rows of notes the log names by path only (suspended, never reviewed: its events
    carry no title) the title and content hash of the file at that path now, as a load would:
    moved later (`mv a.md archive/a.md`), the row follows its bytes, and the suspension with it;
    without them it was marked deleted and the note came back new and due."""
    from studyapp.errors import UserError

    for key, path in rows:
        try:
            note = vault.read_note(path)
        except (UserError, OSError):  # gone, or no note: the next load settles it
            continue
        store.update_note(key, title=note.title, content_hash=note.content_hash)


def _deleted_keys(store: Store) -> dict[str, int]:
    """Path -> key of the newest note marked deleted there (it keeps its history)."""
    return {row.path: row.key for row in store.deleted_notes()}


def review_offsets(events: list[Event], replayed: Replayed) -> dict[int, tuple[int, int | None]]:
    """{note index: (`utc_offset`, `due_utc_offset`) of its last standing review} for the
    reviews whose event records the reviewer's offset (call before the rows' note indexes
    become database keys)."""
    last: dict[int, str] = {}
    for row in replayed.reviews:  # in replay order: the last row of a note is its last review
        last[row[R_NOTE_KEY]] = row[R_EVENT_ID]
    wanted = set(last.values())
    offsets: dict[str, tuple[int, int | None]] = {}
    for event in events:
        if event.id in wanted and event.id not in offsets:
            # `events` checked both ranges as it read the line
            offset, due_offset = event.data.get("utc_offset"), event.data.get("due_utc_offset")
            if type(offset) is int:
                offsets[event.id] = (offset, due_offset if type(due_offset) is int else None)
    return {index: offsets[event_id] for index, event_id in last.items() if event_id in offsets}


def owned_values(history: NoteHistory,
                 offsets: tuple[int, int | None] | None = None) -> dict | None:
    """The owned keys the replayed state implies (mastery aside), or None to leave the note.

    `offsets`: the UTC offsets its last review recorded (`review_offsets`). Its days are then
    the reviewer's, the ones the reviewing device wrote, whichever device replays (two devices
    in two zones would otherwise rewrite each other's notes on every sync); without them (an
    older version's event), this machine's, as before."""
    from studyapp.history.events import review_days
    from studyapp.review_journal import values_from_json
    from studyapp.vault.model import MAX_REVIEW_COUNT

    before = values_from_json(history.values_before or {})
    if history.reviews == 0:  # every review undone: the keys as the first found them
        if history.values_before is None:
            return None
        # as an undo puts them back: each as it was, a key the review added taken out (and the
        # block it added, `NO_BLOCK`, when it is still just that block)
        from studyapp.vault.writeback import ABSENT, NO_BLOCK, Written, meaning, token_means

        tokens = history.tokens_before or {}
        values = {k: Written.token(tokens[k], meaning(k, before[k]))
                  if k in tokens and k in before and token_means(k, tokens[k]) == meaning(k, before[k])
                  else before.get(k, ABSENT)  # a token that means otherwise (a hostile log): the value
                  for k in ("last_reviewed", "next_review", "review_count", "mastery_level")}
        return {**values, NO_BLOCK: True} if before.get(NO_BLOCK) else values
    card = history.card
    if card is None or card.last_review is None:
        return None
    day, next_day = review_days(card.last_review, card.due, *(offsets or (None, None)))
    try:
        base = int(float(before.get("review_count") or 0))
    except (TypeError, ValueError):
        base = 0
    return {"last_reviewed": day, "next_review": next_day,
            "review_count": min(base + history.reviews, MAX_REVIEW_COUNT)}  # a logged count at the limit


def _ahead(note, values: dict) -> bool:
    """Whether the note holds more reviews, or a later one, than the replayed state (a key the
    replayed state takes out, `ABSENT`, stands for none: a note that lacked the keys before a
    review undone, then reviewed again, is ahead while that review's log line is coming)."""
    from studyapp.vault.writeback import meaning

    wanted_count, count = meaning("review_count", values.get("review_count")), getattr(note, "review_count", None)
    if isinstance(wanted_count, int) and isinstance(count, int) and count > wanted_count:
        return True
    wanted_day, day = meaning("last_reviewed", values.get("last_reviewed")), getattr(note, "last_reviewed", None)
    return isinstance(day, date) and (wanted_day is None or isinstance(wanted_day, date) and day > wanted_day)


def _disagrees(note, values: dict) -> bool:
    """Whether the note's owned values differ, in meaning, from `values` (`review_count: null`
    and a count of 0 agree; so do '3' and 3): a write that would change only the text of a
    value it already holds would be made again on every sync, on every device."""
    from studyapp.vault.writeback import ABSENT, NO_BLOCK, meaning

    for key, wanted in values.items():
        if key == NO_BLOCK:
            if _added_block_left(note):
                return True
            continue
        if wanted is ABSENT and key in note.meta and meaning(key, note.meta[key]) != meaning(key, None):
            return True  # the review's value is still there (a line left empty agrees: a kept comment)
        if getattr(note, key, None) != meaning(key, wanted):
            return True
    return False


def _added_block_left(note) -> bool:
    """Whether the note still holds, unchanged, the standard block a review gave it (`NO_BLOCK`)."""
    from studyapp.vault.parse import NoteFormatError, decode
    from studyapp.vault.writeback import without_default_block

    if not note.has_block:
        return False
    try:
        with open(note.source, "rb") as handle:
            return without_default_block(decode(handle.read())[0], note.path) is not None
    except (OSError, NoteFormatError):
        return False


SETTLE_SECONDS = 5.0
"""A note written this recently and holding more reviews than the log is not corrected by a
replay: another device (or process) may be between writing it and logging the review, and a
replay then wrote the review away. The next command replays again (`RECHECK`): it finds the note
agrees once that log line has landed, or corrects it once it has settled. A note behind the log
(a stale copy put back, a review that came by the log) is corrected at once. An mtime in the
future (a skewed clock, a tool setting mtimes) counts as settled: it would never settle, and
every command would replay the whole log again."""
RECHECK = "~recheck"
"""A cached log size no device's file has: its row makes the next command replay the log."""


def write_owned_keys(service, replayed: Replayed, result: SyncResult) -> None:
    """Rewrite the owned keys of reviewed notes that disagree with the replayed state (a note
    ahead of it once it has settled: `SETTLE_SECONDS`)."""
    wanted: dict[str, tuple[NoteHistory, dict]] = {}
    for index, h in enumerate(replayed.notes):
        owned = owned_values(h, result.offsets.get(index)) if h.live and h.reviewed else None
        if owned is not None:
            wanted[h.path] = (h, owned)
    if not wanted:
        return
    snapshot = service.vault.load()
    from studyapp.reviews import settled_moves

    # a note the log names may have been renamed while the log was away (a device offline)
    for old, new in settled_moves(service.reconcile_held(snapshot)).items():
        result.moved = True
        if old in wanted and new not in wanted:
            wanted[new] = wanted.pop(old)
    status = service.store.drill_status()
    now_ns = time.time_ns()
    recent = now_ns - int(SETTLE_SECONDS * 1e9)
    for problem in snapshot.problems:  # reviewed, but unreadable here: said, not skipped silently
        if problem.path in wanted:
            result.problems.append(f"{problem.path}: could not bring its review keys up to date: "
                                   f"{problem.reason}; fix the note, then run `studyapp sync --full`")
    for note in snapshot.notes:
        pair = wanted.get(note.path)
        # a note without a block that another device reviewed gets the block that review gave
        # its copy (as a review here would): else this copy, and a review or `import` here,
        # counted from "never reviewed"
        if pair is None or (not note.has_block and not pair[0].reviews) or not _disagrees(note, pair[1]):
            continue
        if another_note(note, pair[0].title):  # a new note where a reviewed one was: left alone
            continue
        if recent < note.mtime_ns <= now_ns and _ahead(note, pair[1]):
            # a review written a moment ago whose log line may still be coming
            service.store.set_log_size(RECHECK, 0)  # no such log: the next command replays again
            continue
        history, values = pair
        values = dict(values)
        if history.reviews and history.card is not None:
            assert history.card.last_review is not None, "a replayed review sets last_review"
            values["mastery_level"] = note_mastery(
                note, history.card, history.card.last_review, service.scheduler, status)
        try:
            service.vault.write_review_keys(service.vault.read_note(note.path), values)
        except (UserError, OSError) as exc:
            result.problems.append(f"{note.path}: could not write its review keys: {exc}")
            continue
        result.written.append(note.path)


def _note_path(store: Store, note_key: int) -> str:
    """The path of a note that a review or card row names (its note_key references notes)."""
    row = store.note_by_key(note_key)
    assert row is not None, "reviews and cards reference notes(key)"
    return row.path


def adopt_database(store: Store, events_log: EventLog, now: datetime,
                   logged: set[str] | None = None, for_others: bool = False) -> int:
    """Write a database's history that the log lacks into this device's log: reviews from
    before the log existed, and (given the ids the log holds, `logged`) reviews of a log file
    that went missing or shrank since the cache read it. Such events keep their ids, so the
    lost file coming back later counts nothing twice.

    Each old review becomes a review event carrying the due date it gave (its fuzz cannot be
    drawn again), so the replay gives back the cards the database had."""
    rows = store.unlogged_reviews(logged)
    attempts = store.unlogged_attempts(logged)
    if not rows and not attempts:
        return 0
    # Each with the offset it was made in (its days stay the reviewer's). `for_others`: another
    # device's file shrank or went, so the reviews may be its (this device's `undo` leaves
    # them); its own file (or a copy named after it) put back older gives back its own, undoable.
    from studyapp.history.eventlog import ADOPTED

    elsewhere = {ADOPTED: True} if for_others else {}
    if logged is None:
        logged = set()
    device = events_log.device
    events: list[Event] = []
    seen: set[int] = set()
    for row in rows:
        at = row.reviewed_at
        path = _note_path(store, row.note_key)
        data = {"rating": row.rating, "duration_ms": row.duration_ms,
                "title": row.title, "fuzz": False,
                "due": utc_text(row.due_after), **elsewhere,
                **({} if row.utc_offset is None else {"utc_offset": row.utc_offset}),
                **logged_before(json.loads(row.file_values_before or "{}"))}
        if row.note_key not in seen and row.state_before is not None:
            data["seed"] = row.card_before or _card_before(row, at, data["values_before"])
        seen.add(row.note_key)
        event = new_event(EventKind.REVIEW, at, device, path, **data)
        if row.event_id is not None:
            event = Event(row.event_id, event.kind, event.at, event.device, path, event.data)
        events.append(event)
    for card_key, card in store.cards().items() if not logged else ():
        if card.suspended:
            path = _note_path(store, card_key)
            events.append(new_event(EventKind.SUSPEND, now, device, path, seed=card.to_json()))
    for attempt in attempts:
        event = new_event(EventKind.DRILL, attempt.attempted_at,
                          device, None, drill=attempt.drill_id, verdict=attempt.verdict,
                          summary=attempt.summary, duration_ms=attempt.duration_ms,
                          file=attempt.file_path)
        if attempt.event_id is not None:
            event = Event(attempt.event_id, event.kind, event.at, device, None, event.data)
        events.append(event)
    import logging
    import uuid

    for fit in store.fitted_params():
        # an id drawn from the fit itself: adopting it again adds nothing
        same = uuid.uuid5(uuid.NAMESPACE_OID, f"params:{fit.stored_as}")
        events.append(Event(same.hex, EventKind.PARAMS, fit.fitted_at,
                            device, None, {"parameters": fit.parameters,
                                           "log_loss_before": fit.log_loss_before,
                                           "log_loss_after": fit.log_loss_after,
                                           "review_count": fit.review_count}))
    events_log.append(*events)
    logging.getLogger(__name__).warning("wrote %d reviews of the database into the review log %s",
                                        len(rows), events_log.own_file)
    return len(rows)


def _card_before(row: ReviewRow, at: datetime, values_before: dict) -> str:
    """The legacy card a first review started from (seeded from the note's old keys, as
    `schedule.legacy_card` does), rebuilt from the review row's "before" columns."""
    from datetime import timedelta

    try:
        reps = int(float(values_before.get("review_count") or 0))
    except (TypeError, ValueError):
        reps = 0
    last = (None if row.elapsed_days is None
            else at - timedelta(days=row.elapsed_days))
    assert row.state_before is not None and row.due_before is not None, "a review of a card that existed"
    return CardRow(0, row.state_before, None, row.stability_before,
                   row.difficulty_before, row.due_before, last,
                   reps=reps, legacy=True).to_json()


def move_log(ctx, place: str, then: Callable[[], object] = lambda: None) -> tuple[Path, Path, int]:
    """Move this device's log file to `place` ("vault" or "data-dir"): (from, to, files
    moved). Lines already there are kept, missing ones appended. Other devices' files (regular
    ones: the replay reads no other) are copied where absent and never removed: each belongs
    to its own device (removing one from the vault would remove it from that device too); into
    the data dir, where such a copy may be left from an earlier move, the lines it lacks are
    appended.

    `then` (saving the setting) runs once every line is in the new place and on disk, and only
    after it succeeds does the old file go: a failure at any step (a full disk, a setting that
    cannot be written) leaves the log whole where the setting says it is. A target that is
    the source under another name (a link) moves nothing."""
    import shutil

    from studyapp.history.eventlog import data_dir_log

    source = log_dir(ctx.paths, ctx.settings)
    target = vault_log(ctx.paths) if place == "vault" else data_dir_log(ctx.paths)
    own = f"{device_id(ctx.paths)}.jsonl"
    merged: list[Path] = []
    if source != target and source.is_dir() and not _same_folder(source, target):
        target.mkdir(parents=True, exist_ok=True)
        for entry in sorted(source.glob("*.jsonl")):
            if entry.name == own:
                _merge_file(entry, target / entry.name)
                merged.append(entry)
            elif not entry.is_file():  # a folder, a FIFO, a dangling link a sync tool left: no log
                continue
            elif not (target / entry.name).exists():
                shutil.copy2(entry, target / entry.name)
            elif place == "data-dir":  # a copy left by an earlier move: the vault's file is the live one
                _merge_file(entry, target / entry.name)
    then()
    for entry in merged:
        entry.unlink()
    return source, target, len(merged)


def _same_folder(source: Path, target: Path) -> bool:
    try:
        return target.exists() and os.path.samefile(source, target)
    except OSError:
        return False


def _merge_file(source: Path, target: Path) -> None:
    """Append to `target` the complete lines of `source` it lacks, then fsync, then check that
    every line is there (OSError if not: the caller keeps `source`)."""
    lines = source.read_bytes()
    lines = lines[: lines.rfind(b"\n") + 1]
    have = set(target.read_bytes().splitlines()) if target.exists() else set()
    missing = b"".join(line + b"\n" for line in lines.splitlines() if line and line not in have)
    if missing:
        fd = os.open(target, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            if os.fstat(fd).st_size and not target.read_bytes().endswith(b"\n"):
                missing = b"\n" + missing
            view = memoryview(missing)
            while view:  # a full disk writes part, then fails (ENOSPC): never assumed whole
                view = view[os.write(fd, view):]
            os.fsync(fd)
        finally:
            os.close(fd)
    have = set(target.read_bytes().splitlines())
    lost = sum(1 for line in lines.splitlines() if line and line not in have)
    if lost:
        raise OSError(errno.EIO, f"{lost} line(s) of the log did not reach {target}; the log stays where it was")


def utc_now() -> datetime:
    return datetime.now(timezone.utc)
