"""Card state from the notes' own review keys: the way back when the database's history is
gone and no backup holds it, and the catch-up after a restore for notes reviewed since the
backup was taken.

Each reviewed note (`review_count > 0` or `last_reviewed`) whose card the database lacks, or
whose card is older than the note's `last_reviewed`, gets the card its keys describe (as the
previous tool's history migrates: `schedule.legacy_card`). Cards at least as recent as their
note are kept; never-reviewed notes stay new. The notes themselves are not written.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta, timezone
from pathlib import Path
from urllib.parse import quote

from studyapp.cards import derive_card
from studyapp.schedule import has_legacy_history
from studyapp.store import CardRow


@dataclass
class RebuildResult:
    """What `rebuild_from_notes` changed."""

    rebuilt: list[str] = field(default_factory=list)
    """Vault paths whose card now comes from the note's review keys."""
    ahead: list[str] = field(default_factory=list)
    """Those of them whose stored card was older than the note's keys (reviewed since it)."""
    kept: int = 0
    """Notes whose stored card is at least as recent as the note."""
    never_reviewed: int = 0


LATEST_ZONE = timezone(timedelta(hours=14))
"""A note's `last_reviewed` is its reviewer's local day, which is never later than the review's
day at UTC+14: a note is ahead of a card only past that day, wherever the review was made."""


def latest_day(moment: datetime) -> date:
    return moment.astimezone(LATEST_ZONE).date()


def note_is_ahead(note, card: CardRow) -> bool:
    """The note records a review the card does not know of."""
    if note.last_reviewed is None:
        return False
    return card.last_review is None or note.last_reviewed > latest_day(card.last_review)


def notes_ahead_of_database(database_file: Path, notes) -> list[str]:
    """Vault paths whose note records a later review than its stored card: the database is an
    older state (a copy put back by hand, or reviews made elsewhere). Read-only; [] when the
    database cannot be read (doctor reports that on its own)."""
    try:
        conn = sqlite3.connect(f"file:{quote(str(database_file))}?mode=ro", uri=True)
    except sqlite3.Error:
        return []
    try:
        rows = conn.execute(
            "SELECT n.path, c.last_review FROM notes n JOIN cards c ON c.note_key = n.key"
            " WHERE n.deleted = 0 AND c.last_review IS NOT NULL").fetchall()
    except sqlite3.Error:
        return []
    finally:
        conn.close()
    last = {path: latest_day(datetime.fromisoformat(text)) for path, text in rows}
    return sorted(note.path for note in notes
                  if note.path in last and note.last_reviewed is not None
                  and note.last_reviewed > last[note.path])


def rebuild_from_notes(ctx) -> RebuildResult:
    """Store, for every reviewed note, the card its keys describe when the database has none
    or an older one (one transaction)."""
    from studyapp.reviews import ReviewService

    result = RebuildResult()
    with ReviewService(ctx) as service:
        snapshot = service.load()
        store, now = service.store, ctx.now()
        with store.transaction():
            for note in snapshot.notes:
                if not has_legacy_history(note.review_count, note.last_reviewed):
                    result.never_reviewed += 1
                    continue
                row = store.note_by_path(note.path)
                stored = store.card(row.key) if row is not None else None
                if stored is not None and not note_is_ahead(note, stored):
                    result.kept += 1
                    continue
                key = row.key if row is not None else store.add_note(
                    note.path, note.content_hash, note.title, now)
                card, _ = derive_card(note, key, service.scheduler, now)
                if stored is not None:
                    card.suspended, card.lapses = stored.suspended, stored.lapses
                    result.ahead.append(note.path)
                store.put_card(card)
                result.rebuilt.append(note.path)
    return result
