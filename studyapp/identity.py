"""Which stored note is which file: a note's history follows it across renames, folder
renames, swaps and a name handed on, and is not given to another note written at its old path.

A load settles what changed since the last (`has_vanished` checks cheaply, `reconcile_identity`
moves or deletes rows), and the caller logs each move (`ReviewService.reconcile`): a replay
on any device knows only the log. The log records no deletions; `replay` tells a new note at
an old path apart by its first review (`related_titles`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any

from studyapp.schedule import has_legacy_history
from studyapp.store import Store

HOP_SUFFIX = "#moving"
"""A swap's moves go through `<old path>#moving`, a name no note has (notes end in .md)."""


def related_titles(one: str, other: str) -> bool:
    """Whether two titles may name one note: the same words, one inside the other ("Causal
    mask", "Causal masking"), or half their words shared. A heading edited on one device is
    not another note; "Flash attention tiling" where "Causal mask" was is."""
    words = [re.findall(_CJK_OR_WORD, title.casefold()) for title in (one, other)]
    texts = ["".join(w) for w in words]  # "BatchNorm" is "Batch norm"
    if not all(texts) or texts[0] in texts[1] or texts[1] in texts[0]:
        return True
    first, second = set(words[0]), set(words[1])
    return len(first & second) * 2 >= len(first | second)


_CJK_OR_WORD = r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af]|[^\W_]+"
"""A word, or one CJK character (a CJK title has no spaces: "多头自注意力" shares five of six
characters with "多头注意力", where a regex word saw two unrelated words). Compiled when first
used (`re` keeps it), not by every command: it takes a millisecond, and only renames need it."""


def has_vanished(store: Store, notes: Sequence, problem_paths: Iterable[str]) -> bool:
    """Whether there is anything for `reconcile_identity` to settle: a stored live note's path
    missing from the vault, a stored note's path holding a file with another title that is
    another note (`_written_anew`, `_crossed`), or a deleted note's file back (`_put_back`).
    One pass over paths and titles, so a load with nothing to settle takes no lock."""
    by_path = {n.path: n for n in notes}
    problems = set(problem_paths)
    retitled = False
    live: set[str] = set()
    for path, title in store.live_paths_and_titles():
        live.add(path)
        note = by_path.get(path)
        if note is None:
            if path not in problems:
                return True
        elif title and note.title != title:
            retitled = True
    if retitled:
        rows = store.live_notes()
        if _written_anew(store, rows, by_path) or _crossed(rows, by_path) or _moved_off(rows, by_path, live):
            return True
    return bool(_put_back(store, live, by_path))


def _retitled(rows: Sequence, by_path: Mapping[str, Any]) -> list[tuple[Any, Any]]:
    """(row, note) of the stored notes whose path holds a file under another title."""
    return [(row, by_path[row.path]) for row in rows
            if row.title and row.path in by_path and by_path[row.path].title != row.title]


def _crossed(rows: Sequence, by_path: Mapping[str, Any]) -> dict[int, str]:
    """{key: path} of stored notes whose exact bytes now sit at another stored note's path
    (two names swapped; `mv b.md b-old.md; mv c.md b.md`): the history goes with the bytes.
    Only files whose title is not their row's are hashed; a row still holding its own title
    at its own path stays."""
    changed = _retitled(rows, by_path)
    if not changed:
        return {}
    by_hash = {row.content_hash: row for row in rows if row.content_hash}
    by_title: dict[str, list] = {}
    for row in rows:
        by_title.setdefault(row.title, []).append(row)
    found: dict[int, str] = {}
    for row, note in changed:
        other = by_hash.get(note.content_hash)
        if other is None:  # a row the replay made, or bytes edited since: its title, if only it has it
            same = [r for r in by_title.get(note.title, ()) if r is not row]
            other = same[0] if len(same) == 1 and has_legacy_history(note.review_count, note.last_reviewed) else None
        if other is None or other is row:
            continue
        there = by_path.get(other.path)
        if there is None or there.title != other.title:
            found[other.key] = row.path
    return found


def _moved_off(rows: Sequence, by_path: Mapping[str, Any], live: set[str]) -> dict[int, str]:
    """{key: path} of stored notes whose path holds a file with an unrelated title now, while
    the one file with their title, and review keys, sits at a path no stored note has: two
    notes without a history of their own swapped names and a review of one came in from a
    device that was offline (its history started at the old path)."""
    changed = [(row, note) for row, note in _retitled(rows, by_path) if not related_titles(note.title, row.title)]
    if not changed:
        return {}
    free: dict[str, list] = {}
    for note in by_path.values():
        if note.path not in live:
            free.setdefault(note.title, []).append(note)
    found: dict[int, str] = {}
    for row, _note in changed:
        there = free.get(row.title, [])
        if (len(there) == 1 and has_legacy_history(there[0].review_count, there[0].last_reviewed)
                and (not row.content_hash or there[0].content_hash == row.content_hash)):
            found[row.key] = there[0].path  # a row made here knows its bytes: they must have moved
    return found


def _put_back(store: Store, live: set[str], by_path: Mapping[str, Any]) -> list:
    """Notes marked deleted whose file is back at their path (restored from the trash or a
    backup), with no live note there: the same bytes, or the same title with review keys."""
    found = []
    for row in store.deleted_notes():
        note = by_path.get(row.path)
        if note is not None and row.path not in live and (
                (row.content_hash and note.content_hash == row.content_hash)
                or (row.title and note.title == row.title
                    and has_legacy_history(note.review_count, note.last_reviewed))):
            found.append(row)
    return found


def _written_anew(store: Store, rows: Sequence, by_path: Mapping[str, Any]) -> list:
    """The stored rows of reviewed notes whose path now holds another note: a file whose own
    review keys say it was never reviewed, under another title (`mv b.md b-archive.md`, then a
    new `b.md`). The history left with the file that moved, if one appeared; a stale copy of
    the same note put back keeps its title, and a renamed heading its review keys."""
    return [row for row, note in _retitled(rows, by_path)
            if another_note(note, row.title) and store.has_reviews(row.key)]


def another_note(note, title: str | None) -> bool:
    """Whether the file `note` is another note than the one reviewed under `title` at its path:
    its own keys say it was never reviewed, and its title is another. A stale copy of the note
    put back keeps its title; a renamed heading keeps its review keys."""
    return (bool(title) and note.title != title
            and not has_legacy_history(note.review_count, note.last_reviewed))


def _shared_end(path: str, other: str) -> int:
    """How many trailing path components the two paths share."""
    count = 0
    for mine, theirs in zip(reversed(path.split("/")), reversed(other.split("/"))):
        if mine != theirs:
            break
        count += 1
    return count


def _by_closest_first(vanished: list, appeared: list) -> list:
    """The vanished rows, those whose path ends most like an appeared note's with their title
    first: in a renamed folder where one of two same-titled notes was also deleted, the one
    left is the namesake whose path it continues, not whichever row comes first."""
    def best(row) -> int:
        return max((_shared_end(row.path, n.path) for n in appeared if row.title and n.title == row.title),
                   default=0)

    return sorted(vanished, key=best, reverse=True)


def _closest(candidates: list, path: str) -> list:
    """Of several notes with one title, the one whose path ends most like `path` (a renamed
    folder: `ml/rnn/summary.md` is `deep-learning/rnn/summary.md`, not
    `deep-learning/attention/summary.md`); all of them when no one ends closest."""
    if len(candidates) < 2:
        return candidates
    ends = [_shared_end(path, n.path) for n in candidates]
    best = max(ends)
    closest = [n for n, end in zip(candidates, ends) if end == best]
    return closest if best and len(closest) == 1 else candidates


def _swap(store: Store, rows: Mapping[int, Any], crossed: dict[int, str], displaced: list,
          appeared: list) -> dict[str, str]:
    """Give the crossed notes their new paths, and the notes displaced from those paths the file
    with their bytes (else they are deleted). The moves go through a name no note can have
    (`<old>#moving`), all first there and then on: a replay ignores a move onto a path that
    still has a note, as in a swap. Returns the moves in the order to log them."""
    final: dict[int, str] = dict(crossed)
    for row in displaced:
        match = _same_bytes(row, appeared)
        if len(match) == 1:
            appeared.remove(match[0])
            final[row.key] = match[0].path
        else:  # deleted: off the live paths, whose names are unique
            store.update_note(row.key, deleted=True)
    for key in final:
        store.update_note(key, path=f"\0{key}")  # off the live paths first (they are unique)
    hops: dict[str, str] = {}
    for key in final:
        hops[rows[key].path] = f"{rows[key].path}{HOP_SUFFIX}"
    for key, path in final.items():
        store.update_note(key, path=path)
        hops[f"{rows[key].path}{HOP_SUFFIX}"] = path
    return hops


def reconcile_identity(store: Store, notes: Sequence, problem_paths: Iterable[str],
                       now: datetime) -> dict[str, str]:
    """Keep each stored note's key when its file moved; mark vanished notes deleted.

    A stored path that disappeared is matched to a path that appeared (not yet known to the
    store) by content hash, else by title when exactly one candidate has it and it could be
    the same note: a reviewed note's title is not matched to a file whose own review keys say
    it was never reviewed (a note written anew under an old title would take over its history
    and have its keys rewritten). Unmatched vanished notes are marked deleted and keep their
    history; one whose file is back at its path (`_put_back`) is live again. A reviewed note
    whose path holds another note now (`_written_anew`) moves to an appeared file with its
    exact bytes, else is deleted: the new note starts new (a replay tells the two apart by its
    first review, `replay._another_note_began`). Swaps and names handed on: `_crossed`,
    `_moved_off`. Notes that failed to load are still present. Returns {old: new} moves, which
    the caller must log (`ReviewService.reconcile`): a replay knows only the log.
    """
    present = {n.path for n in notes} | set(problem_paths)
    rows = store.live_notes()
    by_key = {row.key: row for row in rows}
    live = {row.path for row in rows}
    by_path = {n.path: n for n in notes}
    crossed = _crossed(rows, by_path)
    taken = set(crossed.values())  # their notes are matched like vanished ones
    known = {row.path: row for row in rows if row.key not in crossed and row.path not in taken}
    off = _moved_off(list(known.values()), by_path, live)
    known = {path: row for path, row in known.items() if row.key not in off}
    vanished = [row for path, row in known.items() if path not in present]
    displaced = [row for row in rows if row.key not in crossed and row.path in taken]
    appeared = [n for n in notes if n.path not in known and n.path not in taken
                and n.path not in set(off.values())]
    moves: dict[str, str] = {}
    replaced = _written_anew(store, list(known.values()), by_path)
    returned = _put_back(store, live, by_path)
    if not vanished and not replaced and not returned and not crossed and not off:
        return {}
    with store.transaction():
        for key, path in off.items():  # to the one file with its title; its old path holds another
            store.update_note(key, path=path)
            moves[by_key[key].path] = path
        if crossed:
            moves.update(_swap(store, by_key, crossed, displaced, appeared))
        for row in returned:  # its history is its own again (the log never knew it was gone)
            store.update_note(row.key, deleted=False)
            appeared = [n for n in appeared if n.path != row.path]
        for row in replaced:
            match = _same_bytes(row, appeared)
            if len(match) == 1:
                appeared.remove(match[0])
                store.update_note(row.key, path=match[0].path)
                moves[row.path] = match[0].path
            else:  # gone, and another note written in its place: that one starts new
                store.update_note(row.key, deleted=True)
        for row in _by_closest_first(vanished, appeared):
            match = _same_bytes(row, appeared)
            if len(match) != 1:
                match = _closest([n for n in appeared if row.title and n.title == row.title
                                  and (has_legacy_history(n.review_count, n.last_reviewed)
                                       or not store.has_reviews(row.key))], row.path)
            if len(match) != 1:
                match = _retitled_and_moved(store, row, appeared)
            if len(match) == 1:
                note = match[0]
                appeared.remove(note)
                store.update_note(row.key, path=note.path, content_hash=note.content_hash)
                moves[row.path] = note.path
            else:
                store.update_note(row.key, deleted=True)
    return moves


def _retitled_and_moved(store: Store, row, appeared: list) -> list:
    """The one appeared note that is `row`'s with its heading corrected and its file renamed to
    match, both since its last review (`mv b.md layer-normalization.md` after "normalisation"
    became "normalization"): a related title (`related_titles`) and the `last_reviewed` day that
    review wrote. Neither its bytes nor its title matched, and the history was left behind."""
    card = store.card(row.key) if row.title else None
    if card is None or card.last_review is None:
        return []
    day = card.last_review.astimezone().date()
    found = [n for n in appeared if n.title and n.last_reviewed == day and related_titles(n.title, row.title)]
    return found if len(found) == 1 else []


def _same_bytes(row, appeared: list) -> list:
    """The appeared notes holding the stored note's exact bytes (none when it has no hash)."""
    return [n for n in appeared if row.content_hash and n.content_hash == row.content_hash]
