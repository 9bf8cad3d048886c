"""The write journal: how a review's (or an undo's) file write and database rows become one
unit, and how a crash between the two is repaired.

Apart from `reviews.py` because it is the recovery half of recording: `ReviewService` writes a
journal row, the note, then calls `finish_review`/`finish_undo`; `repair_pending` (run whenever
a service opens) finishes the database half when the file holds what was written, and drops the
row when the file was never written. It touches only rows whose writing process is gone.
"""

from __future__ import annotations

import json
from datetime import datetime, timezone

from studyapp.errors import UserError
from studyapp.locking import ProcessIdentity, WriterLock
from studyapp.schedule import STORED_MS, recorded_duration_ms
from studyapp.store import CardRow, Store


def finish_review(store: Store, entry: int, payload: dict, hash_after: str,
                   old_bytes: bytes | None, now: datetime, events_log=None) -> int:
    """The log and database halves of a review whose file write has happened."""
    review = dict(payload["review"])
    path = review["path"]
    event = payload.get("event")
    # A row an older version wrote may hold a duration SQLite cannot store (10**20 ms): unknown.
    review["duration_ms"] = recorded_duration_ms(review.get("duration_ms"), STORED_MS)
    if event is not None and "duration_ms" in event:
        event = dict(event, duration_ms=recorded_duration_ms(event["duration_ms"], STORED_MS))
    with store.transaction():
        if event is not None and events_log is not None:
            _append_logged(store, events_log, event)
            review["event_id"] = event["id"]
        row = store.note_by_path(path)
        if row is None:
            key = store.add_note(path, hash_after, payload.get("title"), now)
        else:
            key = row.key
            store.update_note(key, content_hash=hash_after)
        card = CardRow.from_json(payload["card_after"])
        card.note_key = key
        store.put_card(card)
        review.update(note_key=key, hash_after=hash_after)
        review_id = store.insert_review(review, old_bytes=old_bytes)
        store.clear_journal(entry)
    return review_id


def finish_undo(store: Store, entry: int, review_id: int, hash_now: str,
                 event: dict | None = None, events_log=None) -> None:
    """The log and database halves of an undo whose file write has happened."""
    with store.transaction():
        if event is not None and events_log is not None:
            _append_logged(store, events_log, event)
        last = store.review(review_id)
        if last is not None:
            key = last.note_key
            current = store.card(key)
            if last.card_before is None and current is not None and current.suspended:
                # suspended since its first review: never reviewed again, and still suspended
                # (a row no review wrote, as `suspend` stores for a new note; the replay agrees)
                store.put_card(CardRow(note_key=key, state=current.state, step=None, stability=None,
                                       difficulty=None, due=current.due, last_review=None, suspended=True))
            elif last.card_before is None:
                store.delete_card(key)
            else:
                card = CardRow.from_json(last.card_before)
                card.note_key = key  # a replayed card_before names no database key
                if current is not None:
                    card.suspended = current.suspended  # suspension is not part of the review
                store.put_card(card)
            store.update_note(key, content_hash=hash_now)
            store.delete_review(review_id)
        store.clear_journal(entry)


def _append_logged(store: Store, events_log, event: dict) -> None:
    from studyapp.history.events import Event
    from studyapp.history.sync import record

    record(store, events_log, Event.from_json(event))


def repair_pending(store: Store, vault, lock: WriterLock | None = None,
                   events_log=None) -> list[str]:
    """Finish or drop file writes a crash interrupted; returns one line per repair.

    Only rows whose writing process is gone are touched, and only while holding the write
    lock (when it is taken, its holder is mid-write: its rows are left to it)."""
    if lock is None:
        return _repair(store, vault, events_log)
    with lock.attempt() as held:
        return _repair(store, vault, events_log) if held else []


def _repair(store: Store, vault, events_log=None) -> list[str]:
    from studyapp.vault.writeback import same_meaning

    done = []
    for entry in store.journal():
        if _owner_alive(entry.owner):
            continue  # another process (or thread) is writing this one right now
        try:
            note = vault.read_note(entry.path)
        except UserError:
            note = None
        wanted = values_from_json(entry.payload["file_values"])
        written = note is not None and all(
            _same(note.meta.get(k), v) or same_meaning(k, note.meta.get(k), v) for k, v in wanted.items())
        if note is not None and note.content_hash != entry.hash_before and written:
            refused = _refused_event(entry.payload.get("event")) if events_log is not None else None
            if refused is not None:
                done.append(_drop_unloggable(store, vault, entry, refused))
                continue
            if entry.kind == "review":
                finish_review(store, entry.id, entry.payload, note.content_hash, None,
                               datetime.now(timezone.utc), events_log)
            else:
                finish_undo(store, entry.id, entry.payload["review_id"], note.content_hash,
                             entry.payload.get("event"), events_log)
            done.append(f"{entry.path}: finished an interrupted {entry.kind}")
        else:
            store.clear_journal(entry.id)
            done.append(f"{entry.path}: dropped an interrupted {entry.kind} (file not written)")
    return done  # each front end shows them (`ReviewService.startup_lines`): not logged too


def _refused_event(event: dict | None) -> str | None:
    """Why the review log refuses a journal row's event (None: it takes it). An event that is
    not valid now never will be: finishing the row would fail on every start, forever."""
    from studyapp.history.events import BadEvent, Event

    if event is None:
        return None
    try:
        Event.from_json(event)
    except BadEvent as exc:
        return str(exc)
    return None


def _drop_unloggable(store: Store, vault, entry, why: str) -> str:
    """Drop a row whose file write happened but whose event the log refuses (an older version
    wrote the note before checking it): the review (or undo) cannot be recorded, so it is
    dropped as if never made, and the line says which. A review's note gets its review keys
    back (edits made since are kept); an undone review stands, and the next replay, forced
    here, writes its keys back into the note."""
    payload = entry.payload
    if entry.kind == "review":
        review = payload.get("review") or {}
        what = (f"review (rated {_rating_name(review.get('rating'))} at "
                f"{review.get('reviewed_at')})")
        try:
            before = undo_values(review.get("file_values_before") or "{}")
            vault.write_review_keys(vault.read_note(entry.path), before)
            after = "its review keys are back as they were"
        except (UserError, OSError, ValueError) as exc:  # a conflicting edit is a UserError
            after = f"its review keys could not be put back ({exc}): they still show it"
    else:
        from studyapp.history.sync import RECHECK

        what = "undo"
        store.set_log_size(RECHECK, 0)  # the next replay puts the review's keys back
        after = "the review it undid stands (undo it again)"
    store.clear_journal(entry.id)
    return (f"{entry.path}: dropped an interrupted {what}: the review log cannot hold its "
            f"event ({why}); {after}")


def _rating_name(rating) -> str:
    from studyapp.schedule import rating_name

    try:
        return rating_name(rating)
    except (TypeError, ValueError):
        return "unknown"


def _owner_alive(owner: str | None) -> bool:
    """Whether the process that wrote a journal row still runs (rows of old versions: no)."""
    try:
        return owner is not None and ProcessIdentity.parse(owner).is_alive()
    except ValueError:
        return False


def json_values(values: dict) -> dict:
    return {k: (v.isoformat() if hasattr(v, "isoformat") else v) for k, v in values.items()}


def values_from_json(values) -> dict:
    """Owned values as write_review_keys wants them (dates as dates)."""
    from datetime import date

    if isinstance(values, str):
        values = json.loads(values)
    result = {}
    for key, value in values.items():
        if key in ("last_reviewed", "next_review", "created") and isinstance(value, str):
            try:
                value = date.fromisoformat(value)
            except ValueError:
                pass
        result[key] = value
    return result


def undo_values(values) -> dict:
    """The owned values to write back to undo a review whose `file_values_before` are `values`:
    a review key missing there is one the note did not have (`ABSENT`, taken out again), and
    `NO_BLOCK` says it had no block at all. Rows from before this was recorded name every key,
    a missing one as null."""
    from studyapp.vault.model import REVIEW_KEYS
    from studyapp.vault.writeback import ABSENT

    result = values_from_json(values)
    return {**result, **{key: ABSENT for key in REVIEW_KEYS if key not in result}}


def present_values(meta: dict, has_block: bool = True) -> dict:
    """A note's review keys as `file_values_before` keeps them: only those it has, a timestamp
    (`next_review: 2026-06-15 08:00:00`, which YAML reads as a datetime) as the day the app
    reads in it (an undo that cannot put the old bytes back writes that day)."""
    from datetime import datetime

    from studyapp.vault.model import REVIEW_KEYS
    from studyapp.vault.writeback import NO_BLOCK

    kept = json_values({key: meta[key].date() if isinstance(meta[key], datetime) else meta[key]
                        for key in REVIEW_KEYS if key in meta})
    return kept if has_block else {**kept, NO_BLOCK: True}


def _same(actual, wanted) -> bool:
    if hasattr(actual, "isoformat"):
        actual = actual.isoformat()
    if hasattr(wanted, "isoformat"):
        wanted = wanted.isoformat()
    if isinstance(actual, float) or isinstance(wanted, float):
        try:
            return abs(float(actual) - float(wanted)) < 1e-9
        except (TypeError, ValueError):
            return False
    return actual == wanted
