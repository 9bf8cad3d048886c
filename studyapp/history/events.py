"""One event of the review log: what happened to which note, when, on which device."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timezone
from enum import Enum
from typing import Any


class EventKind(str, Enum):
    """What an event records."""

    REVIEW = "review"
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
    def from_json(cls, raw: dict[str, Any]) -> Event:
        """Raises KeyError, TypeError or ValueError for a line that is not an event."""
        data = raw  # the head keys stay in it too: copying 100,000 dicts shows in a rebuild
        at = datetime.fromisoformat(raw["at"])
        if at.tzinfo is None:
            raise ValueError("event time without an offset")
        note = raw.get("note")
        if not isinstance(raw["id"], str) or not isinstance(raw["device"], str) or (
                note is not None and not isinstance(note, str)):
            raise TypeError("malformed event")
        return cls(raw["id"], _KINDS[raw["kind"]], at, raw["device"], note, data)


_KINDS = {kind.value: kind for kind in EventKind}
_HEAD = frozenset({"id", "kind", "at", "device", "note"})


def event_time_text(moment: datetime) -> str:
    """UTC with microseconds always written, so every log line has the same shape."""
    return moment.astimezone(timezone.utc).isoformat(timespec="microseconds")


def new_event(kind: EventKind, at: datetime, device: str, note: str | None = None,
              **data: Any) -> Event:
    """A fresh event with a unique id (random, so two devices never collide)."""
    import uuid  # here: `uuid` imports `platform`, which only writing an event needs

    return Event(uuid.uuid4().hex, kind, at, device, note, data)
