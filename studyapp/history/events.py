"""One event of the review log: what happened to which note, when, on which device.

~440 lines on purpose: every field of every kind is checked as a line is read (a bad line is
left out, never trusted), and those checks sit beside the fields they guard.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date, datetime, time, timedelta, timezone
from enum import Enum
from typing import Any

from studyapp.context import EARLIEST_NOW, LATEST_NOW


class EventKind(str, Enum):
    """What an event records."""

    REVIEW = "review"
    """A review of a note; `utc_offset` and `due_utc_offset` (seconds; absent from older
    versions' events) are the reviewer's UTC offset then and at the due instant it gave: the
    days every device writes into the note (`review_days`)."""
    UNDO = "undo"
    """Reverts the review named by `data["review"]` (an event id)."""
    SUSPEND = "suspend"
    UNSUSPEND = "unsuspend"
    DRILL = "drill"
    """A graded drill submission."""
    PARAMS = "params"
    """FSRS parameters fitted to the log (`studyapp optimize`)."""
    IMPORT = "import"
    """The card a note starts from, taken from another tool (`data["seed"]`); ignored when
    the note already has a card by then."""
    MOVE = "move"
    """The note at `note` is now at `data["to"]` (a rename seen by one device)."""
    DRILL_START = "drill_start"
    """A try at `data["drill"]` began (opened for review); see `studyapp.drill_reviews`."""
    DRILL_HINT = "drill_hint"
    """The next hint of `data["drill"]` was shown."""
    DRILL_GIVEUP = "drill_giveup"
    """The learner gave up `data["drill"]` and saw the reference solution."""
    DRILL_REVIEW = "drill_review"
    """A drill's review: `drill`, `rating`, the `proposed` one, the try's `duration_ms`,
    `hints`, `runs`, `failed_runs`, `gave_up`, and the `try` (its start event's id)."""


@dataclass(slots=True)
class Event:
    """One line of a device's log.

    `note` is the note's stable identity: its vault-relative path when the event happened;
    later renames are events of their own (MOVE), so every device follows them. (Not frozen:
    a frozen dataclass is several times slower to build, and a rebuild builds 100,000.)"""

    id: str
    kind: EventKind
    at: datetime
    device: str
    note: str | None = None
    data: dict[str, Any] = field(default_factory=dict)
    """The kind's own fields (as read from a log line, the line's other keys too)."""

    def to_json(self) -> dict[str, Any]:
        head = {"id": self.id, "kind": self.kind.value, "at": event_time_text(self.at),
                "device": self.device, "note": self.note}
        return {**head, **{k: v for k, v in self.data.items() if k not in _HEAD}}

    @classmethod
    def from_json(cls, raw: Any) -> Event:
        """The event a log line holds; BadEvent (saying why) for one this studyapp cannot
        replay. Every field a replay, the database or a note's review keys take is checked
        here, so a line written by hand or by another version is left out instead of
        stopping every command on every device."""
        if type(raw) is not dict:
            raise BadEvent("not a JSON object")
        kind_text = raw.get("kind")
        kind = _KINDS.get(kind_text) if type(kind_text) is str else None
        if kind is None:
            raise BadEvent(f"'kind' is none of {', '.join(_KINDS)}")
        event_id, device, note = raw.get("id"), raw.get("device"), raw.get("note")
        if type(event_id) is not str or not 0 < len(event_id) <= MAX_ID:
            raise BadEvent("'id' is not an event id")
        if type(device) is not str:
            raise BadEvent("'device' is not a device id")
        if note is None:
            if kind in _OF_A_NOTE:
                raise BadEvent(f"a {kind.value} event names no note")
        elif not (type(note) is str and ".." not in note and "\0" not in note
                  and note[:1] not in _NOT_FIRST) and not _is_note_path(note):
            raise BadEvent("'note' is not the path of a note in the vault")
        text: Any = raw.get("at")
        try:  # the common case inline: this runs for every event of a rebuild
            at = _parse_time(text)
            usual = at.tzinfo is not None and _AT_RANGE[0] <= at <= _AT_RANGE[1]
        except (TypeError, ValueError, OverflowError):
            usual = False
        if not usual:
            moment = _instant(text, _AT_RANGE)
            if moment is None:
                raise BadEvent(f"'at' is not a time from {EARLIEST_NOW} to {LATEST_NOW} with "
                               "its UTC offset")
            at = moment
        if kind is not EventKind.REVIEW or not _plain_review(raw):
            _check_fields(kind, raw)
        # the head keys stay in `data` too: copying 100,000 dicts shows in a rebuild
        return cls(event_id, kind, at, device, note, raw)


class BadEvent(ValueError):
    """A log line that is JSON but no event this studyapp can use: the message says why
    (reported with the line's file and number; the line is left out of the replay)."""


MAX_ID = 200
"""Longest event id read (studyapp's are 32 hex digits; Anki imports' a little longer)."""

_KINDS = {kind.value: kind for kind in EventKind}
_HEAD = frozenset({"id", "kind", "at", "device", "note"})
_OF_A_NOTE = frozenset({EventKind.REVIEW, EventKind.SUSPEND, EventKind.UNSUSPEND,
                        EventKind.IMPORT, EventKind.MOVE})

_NOT_FIRST = ("", "/", "\\")
_parse_time = datetime.fromisoformat
_UTC = timezone.utc
_MARGIN = timedelta(days=2)
"""More than any UTC offset: a time this far inside the range is inside it in every zone."""


def _range(latest: date) -> tuple[datetime, datetime, date]:
    return (datetime.combine(EARLIEST_NOW, time(), _UTC) + _MARGIN,
            datetime.combine(latest, time(), _UTC) - _MARGIN, latest)


_AT_RANGE = _range(LATEST_NOW)
"""When an event may happen: the days `--now` may name (`context.EARLIEST_NOW`..`LATEST_NOW`),
so every date its review writes into a note is one a note may hold."""
_DUE_RANGE = _range(date(9000, 12, 31))
"""A card's due date: up to `maximum_interval` past the latest event (`vault.model.LATEST_DATE`)."""


def _instant(value: object, bounds: tuple[datetime, datetime, date]) -> datetime | None:
    """An ISO time with its offset inside `bounds`, in UTC and in this machine's zone (the
    zone a note's review date is written in); None otherwise."""
    if type(value) is not str:
        return None
    try:
        moment = datetime.fromisoformat(value)
        if moment.tzinfo is None:
            return None
        low, high, latest = bounds
        if low <= moment <= high:  # nearly every event: no zone arithmetic
            return moment
        days = (moment.astimezone(_UTC).date(), moment.astimezone().date())
    except (ValueError, OverflowError):
        return None
    return moment if all(EARLIEST_NOW <= day <= latest for day in days) else None


def _is_note_path(value: object) -> bool:
    """A vault-relative path (a line naming a path outside the vault is not followed)."""
    return (type(value) is str and value != "" and not value.startswith(("/", "\\"))
            and "\0" not in value and (".." not in value or ".." not in value.split("/")))


def _is_text(value: object) -> bool:
    return type(value) is str


def _is_id(value: object) -> bool:
    return type(value) is str and 0 < len(value) <= MAX_ID


def _is_rating(value: object) -> bool:
    return type(value) is int and 1 <= value <= 4


def _is_count(value: object) -> bool:
    return type(value) is int and 0 <= value <= 10**9


def _is_offset(value: object) -> bool:
    """A UTC offset in seconds, as `datetime.timezone` takes it (less than a day either way)."""
    return type(value) is int and -86400 < value < 86400


def _is_number(value: object) -> bool:
    return type(value) in (int, float)


def _is_stability(value: object) -> bool:
    return isinstance(value, (int, float)) and type(value) is not bool and 0 < value < math.inf


def _is_difficulty(value: object) -> bool:
    return isinstance(value, (int, float)) and type(value) is not bool and 1 <= value <= 10


def _is_flag(value: object) -> bool:
    return type(value) is bool or value in (0, 1)


def _card_ok(state, step, stability, difficulty, due, last_review) -> bool:
    """A card FSRS can review and the database can hold: a known state, a step where
    learning has one, a memory state (stability above 0, difficulty 1 to 10) or none yet
    (a new card), and its times inside the calendar studyapp keeps."""
    if type(state) is not int or state not in (1, 2, 3):
        return False
    if step is None:
        if state != 2:
            return False
    elif not (type(step) is int and 0 <= step < 2**31):
        return False
    if stability is None or difficulty is None:
        if stability is not difficulty or state != 1:
            return False
    elif not (_is_stability(stability) and _is_difficulty(difficulty)):
        return False
    return (_instant(due, _DUE_RANGE) is not None
            and (last_review is None or _instant(last_review, _DUE_RANGE) is not None))


_CARD_KEYS = frozenset({"note_key", "state", "step", "stability", "difficulty", "due",
                        "last_review", "suspended", "reps", "lapses", "legacy"})
_CARD_REQUIRED = _CARD_KEYS - {"suspended", "reps", "lapses", "legacy"}


def _is_card_text(value: object) -> bool:
    """A card as `CardRow.to_json` writes it (a review's or a suspension's `seed`)."""
    if type(value) is not str:
        return False
    try:
        card = json.loads(value)
    except ValueError:
        return False
    return (type(card) is dict and _CARD_REQUIRED <= card.keys() <= _CARD_KEYS
            and type(card["note_key"]) is int
            and _card_ok(card["state"], card["step"], card["stability"], card["difficulty"],
                         card["due"], card["last_review"])
            and all(_is_flag(card.get(name, False)) for name in ("suspended", "legacy"))
            and all(_is_count(card.get(name, 0)) for name in ("reps", "lapses")))


def _is_card_fields(value: object) -> bool:
    """The card a review made, as `replay.card_fields` records it (`after`)."""
    return type(value) is list and len(value) == 6 and _card_ok(*value)


_owned_checks: Callable[[str, object], bool] | None = None


def _is_owned_values(value: object) -> bool:
    """A note's review keys as a review found them (`values_before`): what an undo, or a
    replay in which every review of the note was undone, writes back into the note."""
    if type(value) is not dict:
        return False
    global _owned_checks
    if _owned_checks is None:
        _owned_checks = _owned_value_check()
    return all(type(key) is str and _owned_checks(key, item) for key, item in value.items())


NO_BLOCK_BEFORE = "block"
"""In `absent_before`: the reviewed note had no metadata block (the review gave it one)."""


def _is_tokens(value: object) -> bool:
    """Review keys and the text a note wrote for each (`tokens_before`, `writeback.unusual_tokens`)."""
    return type(value) is dict and all(
        key in _EVERY_REVIEW_KEY and type(text) is str and len(text) <= 64 and "\n" not in text
        for key, text in value.items())


def _is_review_keys(value: object) -> bool:
    """Names of review keys (`absent_before`: those a reviewed note did not have), or "block"."""
    from studyapp.vault.model import REVIEW_KEYS

    return type(value) is list and all(key in REVIEW_KEYS or key == NO_BLOCK_BEFORE for key in value)


_EVERY_REVIEW_KEY = frozenset(("last_reviewed", "next_review", "review_count", "mastery_level"))
"""`vault.model.REVIEW_KEYS` (a test keeps them equal), here: a replay asks for it per event."""


def kept_before(data: dict[str, Any]) -> dict[str, Any]:
    """A review event's `values_before` as the database keeps them (`file_values_before`):
    the keys the note had, a key it lacked left out (`absent_before`, which an undo takes out
    again; "block" there: it had no block, `writeback.NO_BLOCK`). An event from before `absent_before` existed, or from an import, names no absent
    key: the keys it leaves out count as null, as undo has always written them."""
    values = data.get("values_before") or {}
    absent = data.get("absent_before")
    if absent is None:  # nearly every event: its values as they are when they name every key
        return values if len(values) >= 4 and _EVERY_REVIEW_KEY <= values.keys() else \
            {key: values.get(key) for key in _EVERY_REVIEW_KEY} | values
    if type(absent) is not list:
        return {key: values.get(key) for key in _EVERY_REVIEW_KEY} | values
    from studyapp.vault.writeback import NO_BLOCK

    kept = {key: value for key, value in values.items() if key not in absent}
    return {**kept, NO_BLOCK: True} if NO_BLOCK_BEFORE in absent else kept


def logged_before(kept: dict[str, Any]) -> dict[str, Any]:
    """The event fields for a review whose note had the keys `kept` (the inverse of
    `kept_before`): `values_before` names every review key (null for a missing one, as older
    versions read it) and `absent_before` the missing ones."""
    from studyapp.vault.model import REVIEW_KEYS
    from studyapp.vault.writeback import NO_BLOCK

    absent = [key for key in REVIEW_KEYS if key not in kept] + ([NO_BLOCK_BEFORE] if kept.get(NO_BLOCK) else [])
    values = {key: kept.get(key) for key in REVIEW_KEYS}
    return {"values_before": values, **({"absent_before": absent} if absent else {})}


def _owned_value_check() -> Callable[[str, object], bool]:
    """What `vault.writeback.validate_updates` takes after `review_journal.values_from_json`
    (imported on first use: the vault package is not needed to stat the log)."""
    from studyapp.vault.model import (
        DATE_KEYS,
        OWNED_KEYS,
        OwnedValueError,
        date_of,
        mastery_of,
        review_count_of,
    )

    def usable(key: str, value: object) -> bool:
        if key not in OWNED_KEYS:
            return False
        try:
            if key in DATE_KEYS:
                if value is None:
                    return True
                if type(value) is not str:
                    return False
                date_of(key, date.fromisoformat(value))
                if len(_good_days) < 4096:
                    _good_days[value] = True
            elif key == "review_count":
                review_count_of(value)
            else:
                mastery_of(value)
        except (OwnedValueError, ValueError):
            return False
        return True

    return usable


def _is_fsrs_parameters(value: object) -> bool:
    """A parameter set this version of FSRS takes (FSRS-6's 21, each within its bounds)."""
    from fsrs.scheduler import LOWER_BOUNDS_PARAMETERS, UPPER_BOUNDS_PARAMETERS

    return (type(value) is list and len(value) == len(LOWER_BOUNDS_PARAMETERS)
            and all(type(p) in (int, float) and low <= p <= high
                    for p, low, high in zip(value, LOWER_BOUNDS_PARAMETERS,
                                            UPPER_BOUNDS_PARAMETERS)))


def _check_fields(kind: EventKind, raw: dict[str, Any]) -> None:
    """BadEvent naming the first field of `raw` that `kind` cannot use."""
    for name, usable, what in _FIELDS[kind]:
        value = raw.get(name)
        if value is not None and not usable(value):
            raise BadEvent(f"{name!r} is not {what}")
    for name, what in _REQUIRED.get(kind, ()):
        if raw.get(name) is None:
            raise BadEvent(f"a {kind.value} event without {what}")


def _plain_review(raw: dict[str, Any]) -> bool:
    """Whether a review is one as studyapp writes it, by the quickest checks (nearly every
    event of a log: `_check_fields` costs a rebuild a third more); False only means "check
    it field by field"."""
    rating = raw.get("rating")
    if type(rating) is not int or not 1 <= rating <= 4:
        return False
    if "seed" in raw or "due" in raw or "tokens_before" in raw or type(raw.get("title", "")) is not str:
        return False  # rarer fields: left to the full check
    offset, due_offset = raw.get("utc_offset"), raw.get("due_utc_offset")
    if (offset is not None and not _is_offset(offset)) or (
            due_offset is not None and not _is_offset(due_offset)):
        return False
    values = raw.get("values_before")
    if values is not None:
        if type(values) is not dict:
            return False
        for key, item in values.items():
            if key == "review_count":
                if type(item) is not int or not 0 <= item <= 10**9:
                    return False
            elif key == "last_reviewed" or key == "next_review":
                if item is not None and _good_days.get(item) is not True:
                    return False
            elif key != "mastery_level" or not (
                    item is None or (type(item) is float and 0.0 <= item <= 1.0)):
                return False
    after = raw.get("after")
    if after is None:
        return True
    if type(after) is not list or len(after) != 6:
        return False
    state, step, stability, difficulty, due, last_review = after
    # the step's range as `_card_ok` checks it: which check runs depends on the dates seen
    # before (`_good_days`), and the answer must not
    if not (type(state) is int and 1 <= state <= 3
            and ((type(step) is int and 0 <= step < 2**31) or (step is None and state == 2))
            and type(stability) is float and 0 < stability < math.inf
            and type(difficulty) is float and 1 <= difficulty <= 10):
        return False
    low, high, _ = _DUE_RANGE
    try:
        due_at, last_at = _parse_time(due), _parse_time(last_review)
        return (due_at.tzinfo is not None and last_at.tzinfo is not None
                and low <= due_at <= high and low <= last_at <= high)
    except (TypeError, ValueError, OverflowError):
        return False


_good_days: dict[object, bool] = {}
"""Review dates (`values_before`) the full check found usable: a log repeats a few hundred."""


_DRILL = ("drill", _is_id, "a drill id")
_FIELDS: dict[EventKind, tuple[tuple[str, Callable[[object], bool], str], ...]] = {
    EventKind.REVIEW: (
        ("rating", _is_rating, "a rating from 1 (again) to 4 (easy)"),
        ("title", _is_text, "a title"),
        ("values_before", _is_owned_values, "a note's review keys"),
        ("absent_before", _is_review_keys, "a list of review keys"),
        ("tokens_before", _is_tokens, "review keys as the note wrote them"),
        ("seed", _is_card_text, "a card"),
        ("due", lambda v: _instant(v, _DUE_RANGE) is not None, "a time with its UTC offset"),
        ("after", _is_card_fields, "a card's fields"),
        ("utc_offset", _is_offset, "a UTC offset in seconds"),
        ("due_utc_offset", _is_offset, "a UTC offset in seconds"),
    ),
    EventKind.UNDO: (("review", _is_id, "an event id"),),
    EventKind.SUSPEND: (("seed", _is_card_text, "a card"),),
    EventKind.UNSUSPEND: (("seed", _is_card_text, "a card"),),
    EventKind.IMPORT: (("seed", _is_card_text, "a card"),),
    EventKind.MOVE: (("to", _is_note_path, "the path of a note in the vault"),),
    EventKind.DRILL: (
        _DRILL, ("verdict", lambda v: v in ("pass", "fail", "error"), "pass, fail or error"),
        ("summary", _is_text, "text"), ("file", _is_text, "a file's path")),
    EventKind.DRILL_START: (_DRILL,),
    EventKind.DRILL_HINT: (_DRILL,),
    EventKind.DRILL_GIVEUP: (_DRILL,),
    EventKind.DRILL_REVIEW: (
        _DRILL, ("rating", _is_rating, "a rating from 1 (again) to 4 (easy)"),
        ("proposed", _is_rating, "a rating from 1 (again) to 4 (easy)"),
        ("hints", _is_count, "a count"), ("runs", _is_count, "a count"),
        ("failed_runs", _is_count, "a count"), ("try", _is_id, "an event id")),
    EventKind.PARAMS: (
        ("parameters", _is_fsrs_parameters, "a set of 21 FSRS-6 parameters within their bounds"),
        ("log_loss_before", _is_number, "a number"), ("log_loss_after", _is_number, "a number"),
        ("review_count", _is_count, "a count")),
}
"""Per kind: (field, check, what it must be) of each field read; None (or absent) passes."""
_REQUIRED: dict[EventKind, tuple[tuple[str, str], ...]] = {
    EventKind.REVIEW: (("rating", "a rating"),),
    EventKind.UNDO: (("review", "the review it reverts"),),
    EventKind.IMPORT: (("seed", "the card it starts from"),),
    EventKind.MOVE: (("to", "the path the note moved to"),),
    EventKind.DRILL: (("drill", "a drill id"), ("verdict", "a verdict")),
    EventKind.DRILL_START: (("drill", "a drill id"),),
    EventKind.DRILL_HINT: (("drill", "a drill id"),),
    EventKind.DRILL_GIVEUP: (("drill", "a drill id"),),
    EventKind.DRILL_REVIEW: (("drill", "a drill id"), ("rating", "a rating")),
    EventKind.PARAMS: (("parameters", "its parameters"),),
}


def event_time_text(moment: datetime) -> str:
    """UTC with microseconds always written, so every log line has the same shape."""
    return moment.astimezone(timezone.utc).isoformat(timespec="microseconds")


def local_offset(at: datetime) -> int:
    """This machine's UTC offset at `at`, in seconds: what a review event records (at the
    review, `utc_offset`, and at the due instant it gave, `due_utc_offset`), so that every
    device writes the reviewer's days into the note."""
    offset = at.astimezone().utcoffset()
    return 0 if offset is None else int(offset.total_seconds())


def review_days(last_review: datetime, due: datetime, offset: int | None,
                due_offset: int | None = None) -> tuple[date, date]:
    """(`last_reviewed`, `next_review`) of a note whose last review was at `last_review` and
    left it due at `due`: the day of the review in the reviewer's UTC offset then (`offset`,
    seconds), the day of the due instant in the reviewer's offset at that instant
    (`due_offset`; `offset` where not known), never before the review's day. The same days
    whichever device writes them (the reviewer's, at review time, or any device replaying the
    log), and the ones the reviewer's own clock shows. `offset` None (a review an older version
    logged): this machine's zone, as those versions wrote it."""
    if offset is None:
        day = last_review.astimezone().date()
        return day, max(due.astimezone().date(), day)
    day = last_review.astimezone(timezone(timedelta(seconds=offset))).date()
    due_zone = timezone(timedelta(seconds=offset if due_offset is None else due_offset))
    return day, max(due.astimezone(due_zone).date(), day)


def new_event(kind: EventKind, at: datetime, device: str, note: str | None = None,
              **data: Any) -> Event:
    """A fresh event with a unique id (random, so two devices never collide)."""
    import uuid  # here: `uuid` imports `platform`, which only writing an event needs

    return Event(uuid.uuid4().hex, kind, at, device, note, data)
