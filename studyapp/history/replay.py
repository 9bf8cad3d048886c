"""Replaying the log: every device's events, deduplicated by id and in time order, through FSRS.

The result is what the database caches (cards, reviews, drill attempts, fitted parameters),
keyed by note identity rather than by the database's own keys. Two reviews of one note on two
devices are two reviews in time order, the second starting from the first's card, exactly as
if one device had done both; a review synced back and forth is one review (same id).

FSRS fuzzes review intervals at random. To make a replay give the very due date the review
gave when it was recorded, the fuzz of each review is drawn from a generator seeded with the
event's id (`review_for_event`, used by the live path too).

A review event also records the card it started from and the card FSRS made of it, with a
fingerprint of the scheduler. Replaying it from that very card under the same scheduler would
give that very result, so the replay takes it as recorded instead of running FSRS again; it
runs FSRS only where the chain differs (a review made on another device before the two had
synced, a review after an undone one, new parameters). That keeps a rebuild fast.

~440 lines on purpose: one pass over the log in time order (reviews, undos, suspensions,
moves, drills, fits), whose rules depend on each other and are read in one place.
"""

from __future__ import annotations

import hashlib
import json
import random
import threading
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from datetime import datetime
from operator import attrgetter
from typing import Any

import fsrs.scheduler as _fsrs_scheduler
from fsrs import Rating, Scheduler

from studyapp import schedule
from studyapp.history.events import Event, EventKind, kept_before
from studyapp.identity import related_titles
from studyapp.store import CardRow, utc_text
from studyapp.store_rows import R_CARD_BEFORE, R_FILE_VALUES_BEFORE, REVIEW_COLUMNS

_fuzz = threading.local()
_library_random = _fsrs_scheduler.random


def _event_random() -> float:
    """The fuzz draw: from the current event's generator while one is set."""
    rng = getattr(_fuzz, "rng", None)
    return rng.random() if rng is not None else _library_random()


_fsrs_scheduler.random = _event_random  # fsrs draws its fuzz from this module-level name


def review_for_event(scheduler: Scheduler, card: CardRow, rating: Rating, at: datetime,
                     duration_ms: int | None, event_id: str,
                     offsets: tuple[int, int | None] | None = None) -> CardRow:
    """`schedule.review` with the fuzz drawn from `event_id`: the same on every replay.
    `offsets`: the reviewer's UTC offsets the event recorded (`event_offsets`), which place a
    whole-day due on the reviewer's calendar whichever device replays it."""
    _fuzz.rng = random.Random(_seed_of(event_id)) if scheduler.enable_fuzzing else None
    try:
        return schedule.review(scheduler, card, rating, at, duration_ms, offsets)
    finally:
        _fuzz.rng = None


def event_offsets(data: dict) -> tuple[int, int | None] | None:
    """(`utc_offset`, `due_utc_offset`) a review event recorded (`events` checked their range
    as it read the line), or None for an event an older version logged: this machine's zone."""
    offset, due_offset = data.get("utc_offset"), data.get("due_utc_offset")
    if type(offset) is not int:
        return None
    return offset, due_offset if type(due_offset) is int else None


def _seed_of(event_id: str) -> int | str:
    """An integer seed from a hex id (seeding from a string hashes it, which is slower)."""
    try:
        return int(event_id, 16)
    except ValueError:
        return event_id


def scheduler_fingerprint(scheduler: Scheduler) -> str:
    """What, besides the card and the rating, decides a review's result (fuzz aside)."""
    text = repr((tuple(scheduler.parameters), scheduler.desired_retention,
                 tuple(scheduler.learning_steps), tuple(scheduler.relearning_steps),
                 scheduler.maximum_interval))
    return hashlib.blake2b(text.encode(), digest_size=8).hexdigest()


def card_fields(card: CardRow) -> list:
    """The part of a card a review reads and writes, as recorded in a review event."""
    return [card.state, card.step, card.stability, card.difficulty, utc_text(card.due),
            utc_text(card.last_review) if card.last_review is not None else None]


@dataclass
class NoteHistory:
    """What the log says about one note."""

    path: str
    title: str | None = None
    card: CardRow | None = None
    reviews: int = 0
    """Reviews that stand (undone ones excluded)."""
    values_before: dict[str, Any] | None = None
    """The owned keys before the first standing review (or before the first review at all,
    when every review was undone): the base `review_count` and what an undo restores. A key
    the note did not have is left out (`events.kept_before`)."""
    tokens_before: dict[str, str] | None = None
    """How the note wrote those keys, where not as the app would (`writeback.unusual_tokens`)."""
    reviewed: bool = False
    """Some review of this note is in the log (standing or undone)."""
    live: bool = True
    """False for an identity left without a path (a move onto a note that had its own)."""
    former: list[str] = field(default_factory=list)
    """Paths it had before its moves, oldest first (a database that knows it by one of them
    follows the moves rather than starting a row of its own: `sync._note_keys`)."""
    fields: list | None = field(default=None, repr=False)
    """`card_fields(card)` when already known as recorded (saves formatting it again)."""
    offsets: tuple[int, int | None] | None = field(default=None, repr=False)
    """`event_offsets` of its last standing review: the reviewer's days (`_values_left_by`)."""


@dataclass
class Replayed:
    """The whole history, as the cache holds it (`note_key` of rows: the note's index in
    `notes`, mapped to database keys by `sync`)."""

    notes: list[NoteHistory] = field(default_factory=list)
    reviews: list[list[Any]] = field(default_factory=list)
    """Review rows in the order of `store_rows.REVIEW_COLUMNS` (`review_field` reads one)."""
    attempts: list[dict[str, Any]] = field(default_factory=list)
    params: list[dict[str, Any]] = field(default_factory=list)
    drill_cards: dict[str, CardRow] = field(default_factory=dict)
    """Each reviewed drill's card, by drill id (`studyapp.drill_reviews`)."""
    drill_reviews: list[dict[str, Any]] = field(default_factory=list)
    drill_marks: list[tuple[str, str, str, str]] = field(default_factory=list)
    """(drill, kind, time, event id) of each try's start, hints and give-up."""
    events: int = 0
    """Distinct events replayed."""
    malformed: int = 0
    """Events whose fields could not be used (left out)."""


def ordered(events: Iterable[Event]) -> list[Event]:
    """Distinct events (first copy of each id) in time order; ties by device, then in the
    order given (a device's file order). Not by id: ids are random, and one instant can hold
    a rename and the review that noticed it, which must replay in the order they were logged."""
    unique: dict[str, Event] = {}
    for event in events:
        unique.setdefault(event.id, event)
    return sorted(unique.values(), key=_TIME_THEN_DEVICE)  # stable: file order within a tie


_TIME_THEN_DEVICE = attrgetter("at", "device")


def replay(events: Iterable[Event], settings, parameters: list[float] | None = None) -> Replayed:
    """Replay every event. `parameters`: FSRS parameters in force before the first PARAMS
    event (None: the defaults)."""
    timeline = ordered(events)
    undone = {e.data.get("review") for e in timeline
              if e.kind is EventKind.UNDO and type(e.data.get("review")) is str}
    scheduler = schedule.build_scheduler(settings, parameters)
    fingerprint = scheduler_fingerprint(scheduler)
    result = Replayed(events=len(timeline))
    where: dict[str, int] = {}  # current path -> index in result.notes
    left: dict[str, list[int]] = {}  # path -> the notes that moved away from it

    def note_of(path: str) -> int:
        index = where.get(path)
        if index is None:
            index = where[path] = len(result.notes)
            result.notes.append(NoteHistory(path))
        return index

    for event in timeline:
        kind, data = event.kind, event.data
        if kind is EventKind.REVIEW and event.note is not None:
            moved = (_moved_away(event.note, data.get("title"), where, left, result)
                     if event.note in left and not _first_review(data) else None)
            index = note_of(event.note) if moved is None else moved
            history = result.notes[index]
            if history.reviews and "seed" in data and _another_note_began(data, history):
                where.pop(event.note)  # that note is gone; this is the first review of another
                index = note_of(event.note)
                history = result.notes[index]
            history.reviewed = True
            title = data.get("title")
            if title:
                history.title = title
            if event.id in undone:
                if history.values_before is None and history.reviews == 0:
                    history.values_before = kept_before(data)
                    history.tokens_before = data.get("tokens_before")
                continue
            try:
                _replay_review(event, index, history, scheduler, fingerprint, result)
            except (KeyError, TypeError, ValueError, IndexError, AttributeError):
                result.malformed += 1  # written by hand or by a newer studyapp: left out
        elif kind in (EventKind.SUSPEND, EventKind.UNSUSPEND) and event.note is not None:
            history = result.notes[note_of(event.note)]
            if kind is EventKind.UNSUSPEND and history.reviews == 0:
                history.card = None  # as live: unsuspending a never-reviewed note restores it as new
            else:
                try:
                    card = history.card or _seed(data, event.at)
                except (KeyError, TypeError, ValueError):
                    result.malformed += 1  # not a card (`events` checks seeds as it reads them)
                    continue
                history.card = replace(card, suspended=kind is EventKind.SUSPEND)
        elif kind is EventKind.IMPORT and event.note is not None:
            history = result.notes[note_of(event.note)]
            if history.card is None and isinstance(data.get("seed"), str):
                try:
                    history.card = _seed(data, event.at)
                except (KeyError, TypeError, ValueError):
                    result.malformed += 1
        elif kind is EventKind.DRILL:
            result.attempts.append({
                "drill_id": data.get("drill"), "verdict": data.get("verdict"),
                "summary": data.get("summary", ""), "attempted_at": utc_text(event.at),
                "duration_ms": schedule.recorded_duration_ms(data.get("duration_ms"), schedule.STORED_MS), "file_path": data.get("file"),
                "event_id": event.id})
        elif kind in _DRILL_MARKS and isinstance(data.get("drill"), str):
            result.drill_marks.append((data["drill"], _DRILL_MARKS[kind], utc_text(event.at), event.id))
        elif kind is EventKind.DRILL_REVIEW and isinstance(data.get("drill"), str):
            if event.id in undone:
                continue
            try:
                _replay_drill_review(event, scheduler, result)
            except (KeyError, TypeError, ValueError):
                result.malformed += 1
        elif kind is EventKind.PARAMS and isinstance(data.get("parameters"), list):
            try:
                scheduler = schedule.build_scheduler(settings, data["parameters"])
            except (TypeError, ValueError):  # another FSRS version's: the last good set stays
                result.malformed += 1
                continue
            fingerprint = scheduler_fingerprint(scheduler)
            result.params.append({"fitted_at": utc_text(event.at), **data})
        elif kind is EventKind.MOVE and event.note is not None:
            target = data.get("to")
            if isinstance(target, str) and event.note in where and target not in where:
                index = where.pop(event.note)
                where[target] = index
                left.setdefault(event.note, []).append(index)
                result.notes[index].former.append(event.note)
                result.notes[index].path = target
    for index in set(range(len(result.notes))) - set(where.values()):
        result.notes[index].live = False
    _undo_data(result.reviews)
    return result


_DRILL_MARKS = {EventKind.DRILL_START: "start", EventKind.DRILL_HINT: "hint",
                EventKind.DRILL_GIVEUP: "giveup"}


def _replay_drill_review(event: Event, scheduler: Scheduler, result: Replayed) -> None:
    """A drill review through the drills' scheduler (no learning steps), fuzz from its id."""
    from studyapp.drill_reviews import drill_review_row, drill_scheduler, new_drill_card

    data = event.data
    drill = data["drill"]
    rating = _RATINGS[data["rating"]]
    before = result.drill_cards.get(drill)
    drills = drill_scheduler(scheduler)
    drills.enable_fuzzing = bool(data.get("fuzz", True))
    after = review_for_event(drills, before or new_drill_card(event.at), rating, event.at,
                             schedule.recorded_duration_ms(data.get("duration_ms"), schedule.STORED_MS), event.id)
    result.drill_cards[drill] = after
    result.drill_reviews.append(drill_review_row(event.id, drill, data, before, after, event.at))


_RATINGS: dict[object, Rating] = {int(r): r for r in Rating}
"""Rating by its number; keyed by object because the number comes from an event's JSON."""

UNDO_REACH = 1000
"""How many of the newest replayed reviews keep what an undo restores (the card and the owned
keys before); formatting it for every review of a long log would double a rebuild's time."""


def _values_left_by(history: NoteHistory, data: dict[str, Any]) -> dict[str, Any]:
    """What undoing a review puts back when it was chained after one its device had not seen
    (two devices offline, the other's review the earlier): the keys that earlier review left,
    as a replay writes them (`sync.owned_values`), not the ones logged, from before it. The
    mastery is the logged one (the replay knows no drills)."""
    from studyapp.history.events import review_days
    from studyapp.vault.model import MAX_REVIEW_COUNT

    card = history.card
    assert card is not None and card.last_review is not None, "called after a standing review"
    day, next_day = review_days(card.last_review, card.due, *(history.offsets or (None, None)))
    try:
        base = int(float((history.values_before or {}).get("review_count") or 0))
    except (TypeError, ValueError):
        base = 0
    return {"values_before": {"last_reviewed": day.isoformat(), "next_review": next_day.isoformat(),
                              "review_count": min(base + history.reviews, MAX_REVIEW_COUNT),
                              "mastery_level": kept_before(data).get("mastery_level")}}


def _undo_data(rows: list[list[Any]]) -> None:
    cut = max(len(rows) - UNDO_REACH, 0)
    for row in rows[:cut]:
        row[R_CARD_BEFORE] = row[R_FILE_VALUES_BEFORE] = None
    for row in rows[cut:]:
        card = row[R_CARD_BEFORE]
        row[R_CARD_BEFORE] = None if card is None else card.to_json()
        row[R_FILE_VALUES_BEFORE] = json.dumps(kept_before(row[R_FILE_VALUES_BEFORE]))


def review_field(row: list[Any], name: str) -> Any:
    """One column of a replayed review row, by name."""
    return row[REVIEW_COLUMNS.index(name)]


def _another_note_began(data: dict[str, Any], history: NoteHistory) -> bool:
    """Whether a review at a path whose note has reviews is the first review of another note
    written there (the log records no deletions): the reviewing device had no card for it (a
    new card as its seed), its keys said it was never reviewed, and its title is another. Two
    devices first reviewing one note offline share its title, and chain as before."""
    title = data.get("title")
    return (isinstance(title, str) and bool(history.title) and not related_titles(title, history.title or "")
            and _first_review(data))


def _first_review(data: dict[str, Any]) -> bool:
    """A review by a device that had no card for the note and whose keys said never reviewed:
    the first review of whatever note is at its path (never of a note with reviews that moved)."""
    before = data.get("values_before")
    if not isinstance(data.get("seed"), str) or not isinstance(before, dict):
        return False
    if before.get("last_reviewed") is not None or before.get("review_count") not in (0, None):
        return False
    try:
        return CardRow.from_json(data["seed"]).stability is None
    except (KeyError, TypeError, ValueError):
        return False


def _moved_away(path: str, title: object, where: dict[str, int], left: dict[str, list[int]],
                result: Replayed) -> int | None:
    """The note a review of `path` is of when it moved away from there before the review was
    logged (a device offline across a rename, or a swap): the one note that left `path` with
    the review's very title while the note there now has another, else the one whose title is
    related while the note there now is not. None: the note at `path`, as always."""
    gone = left.get(path)
    if not gone or not isinstance(title, str) or not title:
        return None
    here = where.get(path)
    here_title = None if here is None else result.notes[here].title
    if here_title == title:
        return None
    away = [i for i in gone if where.get(result.notes[i].path) == i and result.notes[i].title]
    exact = [i for i in away if result.notes[i].title == title]
    if len(exact) == 1:
        return exact[0]
    if here_title and related_titles(title, here_title):
        return None
    match = [i for i in away if related_titles(title, result.notes[i].title or "")]
    return match[0] if len(match) == 1 else None


def _seed(data: dict[str, Any], at: datetime) -> CardRow:
    """The card a note had before its first logged event: as recorded, else a new card."""
    seed = data.get("seed")
    if isinstance(seed, str):
        return CardRow.from_json(seed)
    return schedule.new_card(0, at)


def _replay_review(event: Event, index: int, history: NoteHistory, scheduler: Scheduler,
                   fingerprint: str, result: Replayed) -> None:
    data = event.data
    at = event.at
    stored = history.card
    before = stored if stored is not None else _seed(data, at)
    is_new = stored is None and before.stability is None
    rating = _RATINGS.get(data.get("rating"))
    if rating is None:  # not a review this studyapp can replay: left out
        return
    duration_ms = schedule.recorded_duration_ms(data.get("duration_ms"), schedule.STORED_MS)
    recorded = data.get("after")
    before_fields = history.fields if stored is not None else None
    if before_fields is None:
        before_fields = card_fields(before)
    # the recorded card fields after the review, when they still hold
    reused: list | None = (recorded if type(recorded) is list and len(recorded) == 6
                           and data.get("sched") == fingerprint
                           and data.get("before") == before_fields else None)
    if reused is not None:  # positional: a keyword call of an 11-field dataclass shows at 100,000 reviews
        after = CardRow(
            before.note_key, reused[0], reused[1], reused[2], reused[3],
            datetime.fromisoformat(reused[4]), at, before.suspended, before.reps + 1,
            before.lapses + (rating is Rating.Again and before.state == 2), before.legacy)
    else:
        scheduler.enable_fuzzing = bool(data.get("fuzz", True))
        after = review_for_event(scheduler, before, rating, event.at, duration_ms, event.id,
                                 event_offsets(data))
    if isinstance(data.get("due"), str):  # adopted from an older database: its own due date
        after.due = datetime.fromisoformat(data["due"])
        reused = None
    file_values = data
    recorded_before = data.get("before")
    if stored is not None and history.reviews and stored.last_review is not None \
            and type(recorded_before) is list and recorded_before != before_fields:
        file_values = _values_left_by(history, data)  # chained after a review its device had not seen
    if history.reviews == 0:
        history.values_before = kept_before(data)
        history.tokens_before = data.get("tokens_before")
    history.reviews += 1
    history.card = after
    history.fields = reused
    history.offsets = event_offsets(data)
    result.reviews.append([  # in the order of REVIEW_COLUMNS
        index,
        int(rating),
        reused[5] if reused is not None else utc_text(at),
        duration_ms,
        None if is_new else before.state,
        after.state,
        before.stability,
        after.stability,
        before.difficulty,
        after.difficulty,
        None if is_new else before_fields[4],
        reused[4] if reused is not None else utc_text(after.due),
        (after.due - at).total_seconds() / 86400,
        None if before.last_review is None else (at - before.last_review).total_seconds() / 86400,
        stored,  # card_before: made JSON by `_undo_data`, for the last reviews only
        file_values,  # file_values_before: likewise (`kept_before` of the event's data, for those rows)
        event.note,
        None,  # hash_before
        None,  # hash_after
        event.id,
        data.get("utc_offset") if type(data.get("utc_offset")) is int else None,
    ])
