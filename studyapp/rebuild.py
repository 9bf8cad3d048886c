"""Card state from the notes' own review keys: the way back when the database's history is
gone and no backup holds it, and the catch-up after a restore for notes reviewed since the
backup was taken.

Each reviewed note (`review_count > 0` or `last_reviewed`) whose card the database lacks, or
whose card is older than the note's `last_reviewed`, gets the card its keys describe (as the
previous tool's history migrates: `schedule.legacy_card`). Cards at least as recent as their
note are kept; never-reviewed notes stay new. The notes themselves are not written.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from studyapp.schedule import has_legacy_history
from studyapp.session import derive_card
from studyapp.store import CardRow


@dataclass
class RebuildResult:
    """What `rebuild_from_notes` changed."""

    rebuilt: list[str] = field(default_factory=list)
    """Vault paths whose card now comes from the note's review keys."""
    kept: int = 0
    """Notes whose stored card is at least as recent as the note."""
    never_reviewed: int = 0


def note_is_ahead(note, card: CardRow) -> bool:
    """The note records a review the card does not know of."""
    if note.last_reviewed is None:
        return False
    return card.last_review is None or note.last_reviewed > card.last_review.astimezone().date()


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
                store.put_card(card)
                result.rebuilt.append(note.path)
    return result
