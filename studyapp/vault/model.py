"""What loading a vault produces: notes, problems, and the errors write-back raises.

~420 lines on purpose: a `Note` is built three ways (parsed whole, from its head, from a cache
row) and reads its body, answer and content hash lazily; keeping those paths beside the class
is what lets a field added to one be seen in the others."""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field
from datetime import date, datetime
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

from studyapp.errors import UserError

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

OWNED_KEYS = ("created", "last_reviewed", "next_review", "review_count", "mastery_level")
"""The only metadata keys studyapp ever writes (import adds the whole default block once)."""
REVIEW_KEYS = OWNED_KEYS[1:]
"""The keys a review (and its undo, and a replay) writes: `created` only ever comes with a block
studyapp adds itself."""
DATE_KEYS = ("created", "last_reviewed", "next_review")


class NoteWriteError(UserError):
    """A note cannot be written safely (malformed, or its owned keys cannot be edited in place)."""


class WriteConflict(NoteWriteError):
    """The note changed on disk since it was read and the change cannot be merged safely."""


@dataclass(frozen=True)
class LoadProblem:
    """A file in the vault that cannot be read as a note; it is never written to."""

    path: str
    """Posix path relative to the vault."""
    reason: str
    """One line a user understands."""


def note_id(path: str) -> str:
    """A stable id for a note: its relative path, NFC-normalised so macOS and Linux agree."""
    return unicodedata.normalize("NFC", path)


def as_date(value) -> date | None:
    """A metadata date: a YAML date, a datetime, or a 'YYYY-MM-DD' string; anything else is None."""
    if isinstance(value, datetime):
        return value.date()
    if isinstance(value, date):
        return value
    if isinstance(value, str):
        try:
            return _DAYS[value]  # one lookup: another thread may clear the dict meanwhile
        except KeyError:
            pass
        try:
            day: date | None = date.fromisoformat(value.strip())
        except ValueError:
            day = None
        if len(_DAYS) >= 4096:
            _DAYS.clear()
        _DAYS[value] = day
        return day
    return None


_DAYS: dict[str, date | None] = {}
"""Quoted dates already read: a vault's notes share a few hundred of them (a cold load reads
each note's three dates twice: to check them, then to keep them)."""


EARLIEST_DATE = date(1970, 1, 1)
LATEST_DATE = date(9000, 12, 31)
"""Owned dates outside these are not real review dates (`0001-01-01` is an export's "zero
date"); the scheduler's date arithmetic also stays far from the calendar's ends."""
MAX_REVIEW_COUNT = 10**9
"""More reviews than anyone makes; also well inside the database's 64-bit integers."""
_WHOLE_NUMBER = re.compile(r"[0-9]+")


class OwnedValueError(ValueError):
    """An owned key holds a value studyapp cannot interpret; the message names key and value."""


def _shown(value) -> str:
    """A value as the note writes it (`as_text`; text in quotes, so `'3 times'` shows it is
    text), cut short."""
    text = repr(value) if type(value) is str else as_text(value)
    return text if len(text) <= 40 else text[:30] + "…" + text[-5:]


def review_count_of(value) -> int:
    """`review_count` as a number of reviews: an int, an integral float (3.0) or a quoted
    whole number ('3'); null or absent is 0. Anything else: OwnedValueError."""
    if value is None:
        return 0
    count = None
    if isinstance(value, int) and not isinstance(value, bool):
        count = value
    elif ((isinstance(value, float) and value.is_integer())
          or (isinstance(value, str) and len(value) < 20 and _WHOLE_NUMBER.fullmatch(value.strip()))):
        count = int(value)
    if count is None or not 0 <= count <= MAX_REVIEW_COUNT:
        raise OwnedValueError(f"review_count: {_shown(value)} is not a number of reviews "
                              f"(a whole number from 0 to {MAX_REVIEW_COUNT:,})")
    return count


def mastery_of(value) -> float | None:
    """`mastery_level` as a number from 0 to 1 (quoted or not); null or absent is None."""
    if value is None:
        return None
    number = None
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        number = float(value)
    elif isinstance(value, str) and len(value) < 40:
        try:
            number = float(value)
        except ValueError:
            pass
    if number is None or not 0.0 <= number <= 1.0:  # also False for NaN
        raise OwnedValueError(f"mastery_level: {_shown(value)} is not a number from 0 to 1")
    return number


def date_of(key: str, value) -> date | None:
    """An owned date (YAML date, datetime or quoted 'YYYY-MM-DD') within the plausible range;
    null or absent is None."""
    if value is None:
        return None
    day = as_date(value) if isinstance(value, (date, str)) else None
    if day is None:
        raise OwnedValueError(f"{key}: {_shown(value)} is not a date (write it as 'YYYY-MM-DD')")
    if not EARLIEST_DATE <= day <= LATEST_DATE:
        raise OwnedValueError(f"{key}: {day.isoformat()} is not a real review date "
                              f"(dates from {EARLIEST_DATE.year} to {LATEST_DATE.year} are read; "
                              "null means none)")
    return day


def owned_value_problem(meta: dict) -> str | None:
    """Why the note's owned values cannot be used, as one line, or None when they can.

    Such a note is reported and neither scheduled nor written until the user fixes the value:
    guessing (a count of 0, a new note) would overwrite what the user wrote on the first review.
    """
    try:
        for key in DATE_KEYS:
            date_of(key, meta.get(key))
        count = meta.get("review_count")
        if type(count) is not int or not 0 <= count <= MAX_REVIEW_COUNT:  # the common case, quickly
            review_count_of(count)
        mastery = meta.get("mastery_level")
        if type(mastery) is not float or not 0.0 <= mastery <= 1.0:
            mastery_of(mastery)
    except OwnedValueError as exc:
        return f"{exc}; fix it in the note: until then studyapp neither schedules nor writes it"
    return None


def _as_int(value) -> int:
    try:
        return review_count_of(value)
    except OwnedValueError:
        return 0


def _as_float(value) -> float | None:
    try:
        return mastery_of(value)
    except OwnedValueError:
        return None


def _as_str_list(value) -> list[str]:
    """The text items of a list value (or the value itself), each once: a mapping or list inside
    it is no tag or drill name, and its Python repr ("{'a': 1}") must not pass for one."""
    if value is None:
        return []
    if not isinstance(value, (list, tuple)):
        value = [value]
    items = [as_text(item) for item in value  # `true`, as written: not Python's `True`
             if item is not None and not isinstance(item, (dict, list, tuple, set, bytes))]
    return list(dict.fromkeys(items))  # a tag named twice (a merge) is one tag of one note


def as_text(value) -> str:
    """A block's value as text a user recognises: a scalar as written (near enough: `true`, a
    number, a date), a mapping, list, set or binary value in YAML's flow spelling (`{level:
    hard}`), never Python's repr (`{'level': 'hard'}`, `b'hello'`), which the user never wrote."""
    if type(value) is str:
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    if isinstance(value, (int, float, date)):
        return str(value)
    import yaml

    try:
        return " ".join(yaml.safe_dump(value, default_flow_style=True, allow_unicode=True).split())
    except yaml.YAMLError:
        return type(value).__name__


@dataclass(frozen=True)
class Note:
    """One markdown note: its review keys parsed, its text read lazily from disk when needed."""

    id: str
    path: str
    """Posix path relative to the vault."""
    title: str
    meta: dict
    """Every key of the metadata block, as YAML parsed it ({} without a block)."""
    has_block: bool
    content_hash: str
    """sha256 of the file's bytes when it was read; write-back compares against it. A note
    loaded from its head only hashes the whole file on first use (see `_HashOnDemand`)."""
    size: int
    mtime_ns: int
    source: str = field(repr=False, compare=False)
    """The file on disk (a plain string: building 10,000 Path objects shows in start-up time)."""
    _body: str | None = field(default=None, repr=False, compare=False)
    """The body when the file was read during this load; None after a cached load (read lazily)."""
    ctime_ns: int = field(default=0, repr=False, compare=False)
    """The file's ctime when read: with size and mtime, whether it is still the file read."""

    created: date | None = field(init=False)
    last_reviewed: date | None = field(init=False)
    next_review: date | None = field(init=False)
    review_count: int = field(init=False)
    difficulty: str | None = field(init=False)
    mastery_level: float | None = field(init=False)
    tags: list[str] = field(init=False)
    drills: list[str] = field(init=False)

    def __post_init__(self):
        meta = self.meta
        set_ = object.__setattr__
        for key in DATE_KEYS:
            set_(self, key, as_date(meta.get(key)))
        count = meta.get("review_count")
        set_(self, "review_count", count if type(count) is int and 0 <= count <= MAX_REVIEW_COUNT
             else _as_int(count))
        difficulty = meta.get("difficulty")
        set_(self, "difficulty", None if difficulty is None else as_text(difficulty))
        mastery = meta.get("mastery_level")
        set_(self, "mastery_level", mastery if type(mastery) is float and 0.0 <= mastery <= 1.0
             else _as_float(mastery))
        set_(self, "tags", _as_str_list(meta.get("tags")))
        set_(self, "drills", _as_str_list(meta.get("drills")))

    @classmethod
    def from_cache(cls, row: tuple, source: str, days: Mapping[str | None, date | None]) -> Note:
        """A note rebuilt from its metadata-cache row (`vault.cache.COLUMNS` order): its fields
        as they were computed when it was parsed; `days` maps ISO text to dates (shared: notes
        share dates). `meta`, `tags`, `drills` and `id` are decoded only if someone reads them
        (`due` reads none). Without a content hash (the note was parsed from its head),
        `head_mark` stands in.

        Bypasses `__init__`: building 10,000 notes this way is several times faster.
        """
        (path, size, mtime_ns, content_hash, has_block, title, meta_json, _problem, created,
         last_reviewed, next_review, review_count, difficulty, mastery, tags, drills,
         mark, pairing_json, ctime_ns) = row
        note = object.__new__(cls)
        fields = {
            "path": path, "title": title, "_meta_json": meta_json, "has_block": bool(has_block),
            "size": size, "mtime_ns": mtime_ns, "ctime_ns": ctime_ns, "source": source, "_body": None,
            "created": days[created], "last_reviewed": days[last_reviewed],
            "next_review": days[next_review], "review_count": review_count,
            "difficulty": difficulty, "mastery_level": mastery, "_tags": tags, "_drills": drills,
            "_pairing_json": pairing_json,
        }
        if content_hash is None:
            fields["_head_mark"] = mark
        else:
            fields["content_hash"] = content_hash
        object.__setattr__(note, "__dict__", fields)
        return note

    @classmethod
    def from_head(cls, path: str, source: str, title: str, meta: dict, has_block: bool,
                  size: int, mtime_ns: int, ctime_ns: int, head_mark: str) -> Note:
        """A note parsed from the head of its file (block and title): its body is read when
        shown or paired, and its content hash when first asked for."""
        note = cls(note_id(path), path, title, meta, has_block, "", size, mtime_ns, source, ctime_ns=ctime_ns)
        del note.__dict__["content_hash"]  # `_HashOnDemand` computes it from the file
        note.__dict__["_head_mark"] = head_mark
        return note

    def same_stat(self, st) -> bool:
        """The file `st` describes is still the one this note was read from: same size, mtime
        and ctime (an edit that put size and mtime back still moved the ctime)."""
        return st.st_size == self.size and st.st_mtime_ns == self.mtime_ns and st.st_ctime_ns == self.ctime_ns

    def pairing(self):
        """The drills that train this note: its `drills:` key, else suggested from its text
        (read lazily, from disk after a head or cached load; to pair a whole vault on a hot
        path, see `Vault.pairings` and `Vault.pair_ahead`)."""
        known = self.known_pairing()
        if known is None:
            from studyapp.pairing import drills_for

            try:
                body = self.body
            except UserError:  # unreadable past its head (`doctor` names it): one note must not
                return drills_for(self.meta, "")  # stop a listing; paired from its block, not kept
            known = self.__dict__["_pairing"] = drills_for(self.meta, body)
            self.__dict__["_pairing_fresh"] = True
        return known

    def known_pairing(self):
        """The pairing when it is known without reading the body (worked out already, in the
        metadata cache for this version of the file, or declared by `drills:`), else None."""
        known = self.__dict__.get("_pairing")
        if known is not None:
            return known
        from studyapp.pairing import decode_pairing, drills_for

        cached = self.__dict__.get("_pairing_json")
        if (known := decode_pairing(cached) if cached else None) is None:
            if "drills" not in self.meta:
                return None
            known = drills_for(self.meta, "")  # declared: no body
            self.__dict__["_pairing_fresh"] = True
        self.__dict__["_pairing"] = known
        return known

    @property
    def abs_path(self) -> Path:
        return Path(self.source)

    @property
    def is_new(self) -> bool:
        """Never scheduled: no block, or no next_review date."""
        return self.next_review is None

    @cached_property
    def body(self) -> str:
        """The text after the metadata block (read from disk on first use after a cached load)."""
        if self._body is not None:
            return self._body
        from studyapp.vault.parse import NoteFormatError, decode, find_layout

        try:
            text, _bom = decode(self.abs_path.read_bytes())
            return text[find_layout(text).body_start:]
        except (OSError, NoteFormatError) as exc:
            raise UserError(f"{self.path}: cannot read the note: {exc}") from None

    @cached_property
    def answer(self) -> str:
        """The short answer to recall: the section under the first `## ` heading."""
        from studyapp.vault.parse import extract_answer

        return extract_answer(self.body)


class _Decoded:
    """A field of a note built by `Note.from_cache`, worked out from what the cache row holds
    on first use and then kept (`meta` from its JSON, `tags` and `drills` from their stored
    text, `id` from the path): a warm load builds 10,000 notes and `due` reads none of these.
    A note built by `__init__` holds the field in its instance dict, which wins over this
    (non-data) descriptor, so it is never consulted for those."""

    def __init__(self, name: str, stored: str, decode: Callable[[str], object]):
        self.name, self.stored, self.decode = name, stored, decode

    def __get__(self, note, owner=None):
        if note is None:
            return self
        value = note.__dict__[self.name] = self.decode(note.__dict__[self.stored])
        return value


def _decode_list(text: str) -> list[str]:
    from studyapp.vault.cache import decode_list

    return decode_list(text)


def _decode_meta(data: str | bytes) -> dict:
    from studyapp.vault.cache import decode_meta

    return decode_meta(data)


# mypy cannot express a non-data descriptor standing in for a dataclass field on the class
Note.meta = _Decoded("meta", "_meta_json", _decode_meta)  # type: ignore[assignment]
Note.tags = _Decoded("tags", "_tags", _decode_list)  # type: ignore[assignment]
Note.drills = _Decoded("drills", "_drills", _decode_list)  # type: ignore[assignment]
Note.id = _Decoded("id", "path", note_id)  # type: ignore[assignment]


def head_mark(head: bytes) -> str:
    """What a load read of a note, to recognise it later: the length read and its CRC (with
    size and times this tells whether the file is still the one parsed, even after an edit
    made within one tick that kept the size)."""
    import zlib

    return f"{len(head)}:{zlib.crc32(head):08x}"


class _HashOnDemand:
    """`Note.content_hash` of a note loaded from its head: the sha256 of the whole file,
    computed on first use, when the file is still the one the note was parsed from (same size,
    times and head). When it is not, the hash is a value no file hashes to, so write-back sees
    "changed since read" and merges or refuses instead of overwriting an edit it never saw.
    A note built by `__init__` holds its hash in its instance dict, which wins over this."""

    def __get__(self, note, owner=None):
        if note is None:
            return self
        import hashlib
        import os

        mark = note.__dict__.get("_head_mark") or "0:"
        length = int(mark.split(":", 1)[0])
        raw: bytes | None = None
        try:
            with open(note.source, "rb") as fh:
                st = os.fstat(fh.fileno())
                if note.same_stat(st):
                    raw = fh.read()
        except OSError:
            pass
        if raw is not None and head_mark(raw[:length]) == mark:
            digest = hashlib.sha256(raw).hexdigest()
        else:
            digest = f"changed-since-load:{note.size}:{note.mtime_ns}"
        note.__dict__["content_hash"] = digest
        return digest


Note.content_hash = _HashOnDemand()  # type: ignore[assignment]


@dataclass
class VaultSnapshot:
    """The result of one load: notes sorted by path, and files that could not be read."""

    notes: list[Note]
    problems: list[LoadProblem]
    parsed: int = 0
    """How many files were read and parsed (the rest came from the metadata cache)."""
    reused: int = 0
    """How many notes came from the metadata cache without reading the file."""

    def by_path(self) -> dict[str, Note]:
        return {note.path: note for note in self.notes}
