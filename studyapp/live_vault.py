"""The vault as a long-running front end holds it: loaded once, then kept current note by note
as files change (an edit in the learner's editor, a sync, the app's own writes), with every
note's card computed once per change and a casefolded copy of the text for searching.

The CLI reads the vault afresh on each command and needs none of this; the TUI's facade keeps
one. Textual-free and torch-free.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from studyapp.cards import NoteCard
    from studyapp.reviews import ReviewService
    from studyapp.vault import LoadProblem, Note


def filter_words(text: str) -> list[str]:
    """A filter's words, casefolded: "attention mask" is two, and finds "Mask for attention"."""
    return text.casefold().split()


def holds_every_word(folded: str, words: Iterable[str]) -> bool:
    """Whether casefolded text holds each word somewhere, in any order."""
    return all(word in folded for word in words)


def _read_body(note: Note) -> str | None:
    """A note's body, read without keeping it on the note (`search` keeps only the casefolded
    copy: a 10,000-note vault would otherwise hold its text twice)."""
    if "body" in note.__dict__:
        return note.body
    from studyapp.vault.parse import NoteFormatError, decode, find_layout

    try:
        text, _bom = decode(note.abs_path.read_bytes())
        return text[find_layout(text).body_start:]
    except (OSError, NoteFormatError):
        return None


class LiveVault:
    """Notes by path, the notes that could not be read, and every note's card (cached).

    `notes` is one dict for the lifetime of the object (a review session holds it too);
    `on_forget(path)` is told when a note vanishes or breaks.
    """

    def __init__(self, service: ReviewService, on_forget: Callable[[str], None] = lambda path: None) -> None:
        self.service = service
        self.on_forget = on_forget
        self.notes: dict[str, Note] = {}
        self.problems: list[LoadProblem] = []
        self.loaded = False
        self._items: list[NoteCard] | None = None
        self._folded: dict[str, tuple[str, str]] = {}
        """Casefolded note text by path, with the content hash it was read at (`search`)."""
        self.renames: dict[str, str] = {}
        """{old: new} paths of notes whose file was renamed in the last reload (the same file:
        `renames`), reviewed or not; the history's renames are `ReviewService.last_moves`."""

    def load(self) -> None:
        """Load the vault (warm loads only stat files) and carry identities across renames.

        The first load's cache writes wait for `remember_pairings` (or `close`): on a cold
        start, the rows it parsed are written with the pairings Today works out, once, after
        Today has what it draws."""
        if not self.loaded:
            self.service.vault.hold_cache_writes()
        snap = self.service.load()
        self.notes.clear()
        self.notes.update((note.path, note) for note in snap.notes)
        self.problems = list(snap.problems)
        self._items = None
        self.loaded = True

    def items(self) -> list[NoteCard]:
        """Every note with its card; cached until something is rated, undone or suspended."""
        if self._items is None:
            self._items = self.service.note_cards(list(self.notes.values()))
        return self._items

    def remember_pairings(self) -> None:
        """Keep in the metadata cache the drills worked out for notes since they were read
        (mastery needs them for every reviewed note: the next start reads them back)."""
        self.service.vault.remember_pairings(list(self.notes.values()))
        self.service.vault.release_cache_writes()

    def release_cache_writes(self) -> None:
        """Write what the first load held now (the app went elsewhere than Today first)."""
        self.service.vault.release_cache_writes()

    def close(self) -> None:
        """Write whatever the cache still holds (an app closed before Today was computed),
        and hold nothing from now on (a load still on its way writes as it goes)."""
        self.service.vault.release_cache_writes(final=True)

    @property
    def cached_items(self) -> list[NoteCard] | None:
        return self._items

    def cards_changed(self) -> None:
        """A rating, undo or suspension changed some card: compute the cards again when asked."""
        self._items = None

    def note_file(self, path: str):
        return self.service.vault.root / path

    def written(self, path: str) -> None:
        """The app wrote this note: take it as it is now (kept as last read if it vanished)."""
        self._items = None
        try:
            self.notes[path] = self.service.vault.read_note(path)
        except Exception:  # noqa: BLE001 - the note vanished or broke; it stays as last read
            pass

    def reread(self, path: str) -> Note:
        """Read one note again (after an edit); raises with the reason when it no longer parses."""
        note = self.notes[path] = self.service.vault.read_note(path)
        self._items = None
        return note

    def same_on_disk(self, path: str) -> bool:
        note = self.notes.get(path)
        try:
            st = os.stat(self.note_file(path))
        except OSError:
            return False
        return note is not None and note.same_stat(st)

    def reread_if_changed(self, path: str) -> bool:
        """Re-read one note when its file changed since it was read (a stat, and a read only
        when size or time differ); returns whether the note changed or vanished."""
        note = self.notes.get(path)
        if note is None or self.same_on_disk(path):
            return False
        try:
            fresh = self.service.vault.read_note(path)
        except Exception:  # noqa: BLE001 - gone or broken now: it leaves until fixed
            self.forget(path)
            return True
        self.notes[path] = fresh
        self._items = None
        return fresh.content_hash != note.content_hash

    def reread_edited(self, paths: Iterable[str]) -> tuple[str, ...] | None:
        """Re-read notes edited in place; returns those whose text changed, or None when any
        path is not such a note (new, gone or unreadable), which needs a whole `load`."""
        paths = list(paths)
        if not all(path in self.notes for path in paths):
            return None
        fresh = {}
        for path in paths:
            try:
                fresh[path] = self.service.vault.read_note(path)
            except Exception:  # noqa: BLE001 - gone or broken: the whole load reports it
                return None
        changed = tuple(sorted(p for p, note in fresh.items() if note.content_hash != self.notes[p].content_hash))
        self.notes.update(fresh)
        if changed:
            self._items = None
        return changed

    def reload_changes(self) -> set[str]:
        """Load again; returns the paths added, removed, changed, or broken or fixed."""
        before = {path: note.content_hash for path, note in self.notes.items()}
        titles = {path: note.title for path, note in self.notes.items()}
        marks = file_marks(self.notes)
        broken_before = {p.path for p in self.problems}
        self.load()
        after = {path: note.content_hash for path, note in self.notes.items()}
        changed = {path for path in before.keys() | after.keys() if before.get(path) != after.get(path)}
        self.renames = renames(marks, file_marks(self.notes))
        self.renames |= renamed_and_edited(titles, {path: note.title for path, note in self.notes.items()},
                                           self.renames)
        return changed | (broken_before ^ {p.path for p in self.problems})

    def forget(self, path: str) -> None:
        self.notes.pop(path, None)
        self._items = None
        self.on_forget(path)

    def search(self, notes: list[Note], text: str, should_stop: Callable[[], bool]) -> frozenset[str]:
        """Paths of `notes` that hold every word of `text` (`filter_words`) in their title, path
        or body, ignoring case. Bodies are read lazily (from disk on first use after a cached
        load) and kept casefolded, so later keystrokes are quick; `should_stop` lets a caller
        give up when the filter changed."""
        words = filter_words(text)
        hits = set()
        for note in notes:
            if should_stop():
                break
            folded = self._folded.get(note.path)
            if folded is None or folded[0] != note.content_hash:
                body = _read_body(note)
                if body is None:
                    continue  # unreadable now: not a match
                folded = self._folded[note.path] = (note.content_hash, f"{note.title}\n{note.path}\n{body}".casefold())
            if holds_every_word(folded[1], words):
                hits.add(note.path)
        return frozenset(hits)


def file_marks(notes: Mapping[str, Note]) -> dict[str, tuple[int, int]]:
    """Path -> (size, mtime in ns) of each note as read: a renamed file keeps both."""
    return {path: (note.size, note.mtime_ns) for path, note in notes.items()}


def renamed_and_edited(before: Mapping[str, str], after: Mapping[str, str],
                       known: Mapping[str, str]) -> dict[str, str]:
    """{old: new} of notes renamed and edited at once (`mv a.md b.md` then a save, before the
    watcher looked), which `renames` cannot see (the edit changed the mark): a path gone and a
    path new whose notes have the one title no other gone or new note has. For what the app
    shows (the session, an open note); the history follows notes by `identity`."""
    gone = {path: title for path, title in before.items() if path not in after and path not in known}
    came = {path: title for path, title in after.items()
            if path not in before and path not in known.values()}
    gone_titles = Counter(gone.values())
    came_by_title: dict[str, list[str]] = {}
    for path, title in came.items():
        came_by_title.setdefault(title, []).append(path)
    return {old: came_by_title[title][0] for old, title in gone.items()
            if gone_titles[title] == 1 and len(came_by_title.get(title, ())) == 1}


def renames(before: Mapping[str, tuple], after: Mapping[str, tuple]) -> dict[str, str]:
    """{old: new} of the files that left a path (gone, or another file there now) and are at
    another path now, known by their size and mtime (`file_marks`), one to one: a rename, a
    folder renamed, two names swapped. An edit in place changes the mtime: no rename."""
    gone = {path: mark for path, mark in before.items() if after.get(path) != mark}
    came: dict[tuple, list[str]] = {}
    for path, mark in after.items():
        if before.get(path) != mark:
            came.setdefault(mark, []).append(path)
    twice = {mark for mark, count in Counter(gone.values()).items() if count > 1}
    return {old: came[mark][0] for old, mark in gone.items()
            if len(came.get(mark, ())) == 1 and mark not in twice and came[mark][0] != old}

