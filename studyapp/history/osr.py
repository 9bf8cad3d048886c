"""Review state written by Obsidian Spaced Repetition, as FSRS memory state.

OSR keeps a note's schedule in its front matter (`sr-due`, `sr-interval`, `sr-ease`) or in an
inline comment `<!--SR:!2026-01-05,12,250-->`, with the ease written as 250 or as 2.5. Each
becomes an IMPORT event (the card a note starts from), converted with the FSRS project's own
SM-2 conversion (`fsrs-rs-python`'s `memory_state_from_sm2`). The user's files are not
touched. The event's id is drawn from the note and its values, so importing again adds nothing.
"""

from __future__ import annotations

import math
import re
import uuid
from dataclasses import dataclass
from datetime import date, datetime, timedelta

from studyapp.context import EARLIEST_NOW, LATEST_NOW
from studyapp.store import CardRow

INLINE = re.compile(r"<!--SR:!(\d{4}-\d{2}-\d{2}),(\d+),(\d+(?:\.\d+)?)"
                    r"(?:!\d{4}-\d{2}-\d{2},\d+,\d+(?:\.\d+)?)*-->")
"""A whole OSR comment, its first schedule taken (a card's siblings follow, `!`-separated): a
value with more after it (`250abc`, `2.5e308`) is no schedule, not its leading digits."""


@dataclass(frozen=True)
class OsrSchedule:
    """One note's schedule as OSR wrote it."""

    due: date
    interval_days: int
    ease: float
    """As a factor (2.5), whichever way it was written."""


class OsrValueError(ValueError):
    """OSR values that cannot start a card (the message says which and why): the note is
    reported and left out, and the other notes still import."""


MAX_INTERVAL_DAYS = 36_500
"""A hundred years: more is no interval anyone reviews at (and overflows date arithmetic)."""


def schedule_of(note) -> OsrSchedule | None:
    """The note's OSR schedule: front matter first, else the first inline comment; None when
    it has none, OsrValueError when its values are not a schedule studyapp can start from."""
    meta = note.meta
    if meta.get("sr-due") is not None:
        missing = [key for key in ("sr-interval", "sr-ease") if meta.get(key) is None]
        if missing:
            raise OsrValueError(f"sr-due without {' and '.join(missing)}")
        due = meta["sr-due"]
        if not isinstance(due, date):
            try:
                due = date.fromisoformat(str(due).strip())
            except ValueError:
                raise OsrValueError(f"sr-due: {_shown(due)} is not a date") from None
        return _checked(due, meta["sr-interval"], meta["sr-ease"])
    body = note.body or ""
    at = body.find("<!--SR:")
    if at < 0:
        return None
    found = INLINE.match(body, at)
    if found is None:  # said, not skipped in silence: the note's schedule would be lost
        comment = body[at:].split("-->", 1)[0].splitlines()[0]
        raise OsrValueError(f"{_shown(comment + '-->')}: an <!--SR:...--> comment that is not "
                            "!date,interval,ease")
    try:
        due = date.fromisoformat(found[1])
    except ValueError:
        raise OsrValueError(f"<!--SR:!{found[1]}: not a date") from None
    return _checked(due, found[2], found[3])


def _checked(due: date, interval: object, ease: object) -> OsrSchedule:
    """The schedule if its values make a card whose times the log keeps (1970 to 8900)."""
    days = _number(interval)
    if days is None or not days.is_integer() or not 0 <= days <= MAX_INTERVAL_DAYS:
        raise OsrValueError(f"interval {_shown(interval)} is not a number of days from 0 to "
                            f"{MAX_INTERVAL_DAYS:,}")
    factor = _number(ease)
    if factor is None or factor <= 0:
        raise OsrValueError(f"ease {_shown(ease)} is not a positive number (250 or 2.5)")
    day = due.date() if isinstance(due, datetime) else due  # a datetime keeps its event id
    low, high = EARLIEST_NOW + _MARGIN, LATEST_NOW - _MARGIN
    if not low <= day <= high:
        raise OsrValueError(f"due {day.isoformat()} is outside the days studyapp keeps "
                            f"({low} to {high})")
    if (day - low).days < days:
        raise OsrValueError(f"due {day.isoformat()} less its interval of {int(days)}d is "
                            f"before {low}, the first day studyapp keeps")
    return OsrSchedule(due, int(days), _factor(factor))


_MARGIN = timedelta(days=3)
"""The import happens at local midnight: this far inside the log's range it is inside it in
every time zone."""


def _number(value: object) -> float | None:
    """A finite number (OSR writes ints; YAML may give a float or a string), else None."""
    if isinstance(value, bool):
        return None
    try:
        number = float(value) if isinstance(value, (int, float, str)) else None
    except (ValueError, OverflowError):
        return None
    return number if number is not None and math.isfinite(number) else None


def _shown(value: object) -> str:
    from studyapp.vault.model import as_text

    text = as_text(value)  # as the note wrote it: `[2026-11-20]`, not Python's repr
    return text if len(text) <= 30 else text[:25] + "…"


def _factor(ease: float) -> float:
    """250 and 2.5 both mean an ease factor of 2.5."""
    return ease / 100 if ease > 10 else ease


def card_from(schedule: OsrSchedule, desired_retention: float) -> CardRow:
    """A review-state FSRS card with the memory state SM-2's interval and ease imply."""
    from studyapp.optimize import fsrs_rs
    from studyapp.schedule import start_of_day

    fsrs_rs_python = fsrs_rs("`import-history osr` (SM-2 to FSRS)")

    interval = max(schedule.interval_days, 1)
    model = fsrs_rs_python.FSRS(fsrs_rs_python.DEFAULT_PARAMETERS)
    state = model.memory_state_from_sm2(schedule.ease, float(interval), desired_retention)
    due = start_of_day(schedule.due)
    return CardRow(note_key=0, state=2, step=None, stability=float(state.stability),
                   difficulty=float(state.difficulty), due=due,
                   last_review=due - timedelta(days=interval), reps=1, legacy=True)


def import_event_id(path: str, schedule: OsrSchedule) -> str:
    """The same note with the same values always gives the same event id (idempotent)."""
    key = f"osr:{path}:{schedule.due}:{schedule.interval_days}:{schedule.ease}"
    return uuid.uuid5(uuid.NAMESPACE_URL, key).hex


def import_time(card: CardRow) -> datetime:
    """When the imported state held: at its last review, before any later review of ours."""
    assert card.last_review is not None, "card_from always sets last_review"
    return card.last_review


def unusable(event) -> str | None:
    """Why the log's reader would leave `event` out, None if it keeps it: an import checks each
    event so before appending it, since a line the reader drops is no import on any device and
    would be appended again by every later run."""
    import json

    from studyapp.history.events import Event

    try:  # NaN and infinity are no JSON the reader takes: refused here as well
        Event.from_json(json.loads(json.dumps(event.to_json(), allow_nan=False)))
    except (ValueError, OverflowError) as exc:  # BadEvent is a ValueError
        return str(exc)
    return None
