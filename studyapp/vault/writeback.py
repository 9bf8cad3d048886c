"""Byte-exact write-back: change only the values of the review keys studyapp owns.

The block is edited as raw lines, never re-dumped: key order, quoting, comments, unknown keys,
line endings and the body stay as they were. The edited block is parsed again and compared with
what was intended before anything is written (defence in depth).

~430 lines on purpose: finding the owned lines, editing them, the tokens an undo puts back and
the check of the edited block are one contract, read together when any of them changes.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from datetime import date, datetime

from studyapp.vault.model import (
    DATE_KEYS,
    OWNED_KEYS,
    REVIEW_KEYS,
    OwnedValueError,
    date_of,
    mastery_of,
    review_count_of,
)
from studyapp.vault.parse import NoteFormatError, find_layout, parse_block

_NULL_TOKENS = {"", "~", "null", "Null", "NULL"}
_COMPLEX_START = tuple("|>[{&*!%@`")


class _Absent:
    """The type of `ABSENT`."""

    def __repr__(self) -> str:
        return "ABSENT"


class Written(str):
    """An update's value written as this exact token, which means `means` (`1e-3`, `'09'`,
    `2026-06-15 08:00:00`, `~`, nothing after the colon): an undo puts back a value as the user
    wrote it, not as the app would render what it means (`written_tokens`)."""

    means: object = None

    @classmethod
    def token(cls, text: str, means: object) -> Written:
        written = cls(text)
        written.means = means
        return written


ABSENT = _Absent()
"""An update's value meaning "the note had no such key": an undo takes out the line the review
added. A line the user has since given a comment stays, with the value None means (null, 0)."""


def owned_value(key: str, value):
    """What an owned value means (a date, a count, a mastery), whatever its YAML type or quoting;
    OwnedValueError when it means nothing the app can use."""
    if key in DATE_KEYS:
        return date_of(key, value)
    if key == "review_count":
        return review_count_of(value)
    return mastery_of(value)


def validate_updates(updates: dict) -> dict:
    """The updates as plain values (dates, ints, floats, None); keys studyapp does not own are
    a ValueError and values no note may hold a TypeError (both bugs in the caller).

    A value may take any form a note may hold ('3', 3.0): undo writes back what it read.
    """
    plain = {}
    for key, value in updates.items():
        if key not in OWNED_KEYS:
            raise ValueError(f"{key!r} is not a review key studyapp may write ({', '.join(OWNED_KEYS)})")
        if value is ABSENT:
            plain[key] = ABSENT
            continue
        if isinstance(value, Written):
            plain[key] = value  # taken from a line of the note's own block (`written_tokens`)
            continue
        if isinstance(value, datetime) or (key in DATE_KEYS and not isinstance(value, (date, type(None)))):
            raise TypeError(f"{key}: unsupported value {value!r}")
        try:
            # null stays null (an undo puts back `review_count: null`, which means 0 reviews)
            plain[key] = None if value is None else owned_value(key, value)
        except OwnedValueError:
            raise TypeError(f"{key}: unsupported value {value!r}") from None
    return plain


def _kind(key: str, value) -> str:
    """The YAML type a write must keep: a quoted value stays a string, a date a date, and a
    count written as 3.0 a float."""
    if isinstance(value, str):
        return "str"
    if isinstance(value, date):
        return "date"
    if isinstance(value, float) and key == "review_count":
        return "float"
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return "number"
    return type(value).__name__


def comparable(value):
    """A value as it compares across quoting styles: dates as 'YYYY-MM-DD', numbers as numbers."""
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, bool):
        return ("bool", value)
    if isinstance(value, int):
        return float(value)
    return value


def render_float(value: float) -> str:
    """A float as yaml.dump writes it, so YAML reads it back as the same float."""
    text = repr(float(value)).lower()
    if "." not in text:
        text = text.replace("e", ".0e", 1) if "e" in text else text + ".0"
    return text


def _render(key: str, value, style: str, old) -> str:
    """The new value's text, in the type and quoting of the value it replaces (`old`)."""
    if value is None:
        return "null"
    if isinstance(value, date):
        text = value.isoformat()
    elif isinstance(value, int) and not (key == "review_count" and isinstance(old, float)):
        text = str(value)
    else:
        text = render_float(value)
    quoted = style in ("'", '"') and (isinstance(value, date) or isinstance(old, str))
    return f"{style}{text}{style}" if quoted else text


def _split_lines(block: str) -> list[str]:
    return re.findall(r"[^\n]*\n|[^\n]+$", block)


def _value_span(line: str, after_colon: int) -> tuple[int, int, str]:
    """(start, end, style) of the scalar after `key:`; raises NoteFormatError if not a plain scalar."""
    content_end = len(line.rstrip("\r\n"))
    start = after_colon
    while start < content_end and line[start] in " \t":
        start += 1
    if start == content_end:
        return start, start, "plain"
    first = line[start]
    if first == "#":  # `key:  # comment` holds null
        return after_colon, after_colon, "plain"
    if first in "'\"":
        end = start + 1
        while end < content_end:
            if line[end] == first:
                if first == "'" and end + 1 < content_end and line[end + 1] == "'":
                    end += 2
                    continue
                return start, end + 1, first
            end += 2 if first == '"' and line[end] == "\\" else 1
        raise NoteFormatError("a quoted value spans several lines")
    if first in _COMPLEX_START or line.startswith("- ", start):
        raise NoteFormatError("the value is not a single plain scalar")
    comment = re.search(r"[ \t]#", line[start:content_end])
    end = start + comment.start() if comment else content_end
    while end > start and line[end - 1] in " \t":
        end -= 1
    return start, end, "plain"


def _note_date_style(lines: list[str]) -> str:
    """The quoting the note uses for its dates (users' notes: single quotes)."""
    for line in lines:
        match = _OWNED_LINE.match(line)
        if match is not None and match["key"] in DATE_KEYS:
            try:
                start, end, style = _value_span(line, match.end())
            except NoteFormatError:
                continue
            if line[start:end] not in _NULL_TOKENS:
                return style
    return "'"


_OWNED_LINE = re.compile(rf"^(?P<quote>[\"']?)(?P<key>{'|'.join(map(re.escape, OWNED_KEYS))})(?P=quote)"
                         r"[ \t]*:(?=[ \t\r\n]|$)", re.MULTILINE)
"""An owned key's line: the key plain or quoted (`"last_reviewed": null`, as JSON-minded tools
write it; the quotes stay, only the value changes)."""


def owned_lines(block: str, meta: dict, keys: Collection[str] = REVIEW_KEYS) -> dict[str, int]:
    """The line (index) of each of `keys` the block has, as a write needs it: one line per key,
    holding a one-line scalar. NoteFormatError otherwise: `parse_block` refuses such a note (for
    the keys a review writes) rather than schedule a note no review could write."""
    found: dict[str, int] = {}
    matches = [match for match in _OWNED_LINE.finditer(block) if match["key"] in keys]
    seen = [match["key"] for match in matches]
    if any(match["quote"] for match in matches) or len(seen) != len(set(seen)):
        # a quoted key, or a key twice: where YAML itself sees the keys decides (a line of a
        # multi-line value may start like a key, `'last_reviewed': ...`)
        lines = _key_lines(block)
        matches = [match for match in matches
                   if block.count("\n", 0, match.start()) in lines.get(match["key"], ())]
    for match in matches:
        key = match["key"]
        if key in found:
            raise NoteFormatError(f"the key '{key}' appears more than once in the metadata block")
        line_end = block.find("\n", match.end()) + 1 or len(block)
        try:
            start, end, _style = _value_span(block[match.start():line_end], match.end() - match.start())
        except NoteFormatError as exc:
            raise NoteFormatError(f"{key}: {exc}") from None
        if start == end and block[line_end:line_end + 1] in (" ", "\t", "-") and line_end < len(block):
            raise NoteFormatError(f"the value of '{key}' spans several lines")
        found[key] = block.count("\n", 0, match.start())
    for key in keys:
        if key in meta and key not in found:  # a flow mapping, a quoted or complex key
            raise NoteFormatError(f"cannot locate the line of '{key}' in the metadata block")
        if key in found and key not in meta:  # a line of a value wrapped over lines: a write would edit it
            raise NoteFormatError(f"a line inside another value starts like the key '{key}', so a review "
                                  "could not write that key; put the value on one line")
    return found


def _key_lines(block: str) -> dict[str, list[int]]:
    """Each top-level key's lines (0-based) in the block, as YAML reads them; {} when it does not."""
    import yaml

    try:
        node = yaml.compose(block, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    except yaml.YAMLError:
        return {}
    lines: dict[str, list[int]] = {}
    if isinstance(node, yaml.MappingNode):
        for key, _value in node.value:
            if isinstance(key, yaml.ScalarNode):
                lines.setdefault(str(key.value), []).append(key.start_mark.line)
    return lines


def edit_block(block: str, updates: dict, newline: str) -> str:
    """The block text with the updated values; raises NoteFormatError when it cannot be done safely."""
    updates = validate_updates(updates)
    old_meta = parse_block(block)
    lines = _split_lines(block)
    where = owned_lines(block, old_meta, keys=tuple(updates))
    date_style = _note_date_style(lines)
    appended, removed = [], []
    for key in OWNED_KEYS:
        if key not in updates:
            continue
        value = updates[key]
        if value is ABSENT:
            if key not in where:
                continue  # not there: nothing to take out
            if _bare(lines[where[key]]):
                removed.append(key)
                continue
            value = updates[key] = owned_value(key, None)  # commented on since: the line stays
        if key not in where:
            appended.append(key)
            continue
        line = lines[where[key]]
        match = _OWNED_LINE.match(line)
        assert match is not None  # `owned_lines` found this line by this pattern
        start, end, style = _value_span(line, match.end())
        if isinstance(value, Written):
            if line[start:end] != value and value.strip() and start < end:  # a value for a value:
                lines[where[key]] = line[:start] + value + line[end:]  # the blanks before it stay
            elif line[start:end] != value:  # `key:` and nothing else, `key: ~`, `key: 1e-3`: as written
                lines[where[key]] = line[:match.end()] + _after_colon(value) + line[end:]
            continue
        if key in old_meta and meaning(key, old_meta[key]) == meaning(key, value) and (
                (old_meta[key] is None) == (value is None)):
            continue  # already holds this value: leave the line byte for byte
        if line[start:end] in _NULL_TOKENS:
            style = date_style  # a first value takes the quoting of the note's other dates
        token = _render(key, value, style, old_meta.get(key))
        if start == end and (start == 0 or line[start - 1] == ":"):
            token = " " + token
        lines[where[key]] = line[:start] + token + line[end:]
    for index in sorted((where[key] for key in removed), reverse=True):
        del lines[index]
    new_block = "".join(lines)
    if appended:
        closing = document_end(new_block)  # `...` closes the YAML: new keys go before it
        at = len(new_block) if closing is None else closing
        new_block, tail = new_block[:at], new_block[at:]
        if new_block and not new_block.endswith("\n"):
            new_block += newline
        for key in appended:
            value = updates[key]
            text = _after_colon(value) if isinstance(value, Written) else " " + _render(key, value, date_style, None)
            new_block += f"{key}:{text}{newline}"
        new_block += tail
    verify_edit(old_meta, new_block, updates, appended, removed)
    return new_block


def _after_colon(token: str) -> str:
    """What follows `key:` for a token as written: a value after one space; for no value, the
    blanks the user left after the colon (`key: `), as they were, and nothing else (a logged
    token is another device's text: no other character is written where a value is blank)."""
    if token.strip():
        return " " + token
    return token if not token.strip(" \t") else ""


def document_end(block: str) -> int | None:
    """Where a YAML document-end line (`...`, maybe with a comment) that ends the block starts,
    with only blank or comment lines after it; None without one. Read line by line from the end:
    a pattern for it backtracked exponentially over blank lines after a `...#` line inside a
    quoted value (minutes, then hours, with the writer lock held)."""
    at = len(block)
    for line in reversed(_split_lines(block)):
        at -= len(line)
        text = line[:-1] if line.endswith("\n") else line
        text = text[:-1] if text.endswith("\r") else text
        rest = text.lstrip(" \t")
        if not rest or rest.startswith("#"):
            continue  # blank or a comment: still after the end
        tail = text[3:].lstrip(" \t")
        return at if text.startswith("...") and (not tail or tail.startswith("#")) else None
    return None


NO_BLOCK = "(no block)"
"""In an undo's values (never a YAML key: it has a space and parentheses): the note had no
metadata block before the review, which gave it the standard one (`add_default_block`)."""


def without_default_block(text: str, *paths: str) -> str | None:
    """The note's text without its block when the block is, byte for byte, the standard one a
    first review added (`add_default_block` on its `created` day, for the note at one of
    `paths`: its default tags come from its folder then; its review keys taken out already);
    None when it differs (the user has since written in it: the block stays)."""
    from studyapp.vault.blocks import add_default_block
    from studyapp.vault.model import as_date

    layout = find_layout(text)
    if not layout.has_block:
        return None
    body = text[layout.body_start:]
    created = as_date(parse_block(text[layout.block_start:layout.block_end]).get("created"))
    if created is None:
        return None
    for path in dict.fromkeys(paths):
        if edit_review_keys(add_default_block(body, path, created), dict.fromkeys(REVIEW_KEYS, ABSENT)) == text:
            return body
    return None


def unusual_tokens(text: str) -> dict[str, str]:
    """The review keys a note's text writes otherwise than the app would (`~`, nothing, `Null`,
    `1e-3`, a timestamp): what a review's log event carries, so that an undo replayed on any
    device puts them back as the user wrote them (the device that reviewed keeps the old bytes)."""
    found = {}
    for key, token in written_tokens(text).items():
        means = token.means
        plain = "null" if means is None else means.isoformat() if isinstance(means, date) else str(means)
        if str(token).strip("'\"") != plain:
            if len(token) <= MAX_TOKEN:
                found[key] = str(token)
            elif not token.strip():
                found[key] = ""  # too many blanks to log: none (a blank value still, never `null`)
    return found


def token_means(key: str, text: str):
    """What a logged token means as the value of `key` (`OwnedValueError` when it is no such
    value): a token from another device's log is written only where it means what was logged."""
    if any(ch < " " and ch != "\t" or "\x7f" <= ch <= "\x9f" for ch in text):
        return OwnedValueError  # a control character: no note's value (a line break, or worse)
    try:
        meta = parse_block(f"{key}:{' ' if text else ''}{text}\n")
    except NoteFormatError:
        return OwnedValueError
    return meaning(key, meta.get(key)) if list(meta) == [key] else OwnedValueError


MAX_TOKEN = 64
"""The longest token a review event carries (a value is short; anything longer is not logged)."""


def written_tokens(text: str) -> dict[str, Written]:
    """The exact token of each review key a note's text holds (`key: ~`, `key:`, `key: 1e-3`),
    with what it means, for an undo to write back as the user wrote it; {} when the text
    cannot be read so."""
    try:
        layout = find_layout(text)
        if not layout.has_block:
            return {}
        block = text[layout.block_start:layout.block_end]
        meta = parse_block(block)
        where = owned_lines(block, meta, keys=tuple(key for key in REVIEW_KEYS if key in meta))
    except NoteFormatError:
        return {}
    lines = _split_lines(block)
    found = {}
    for key, index in where.items():
        match = _OWNED_LINE.match(lines[index])
        if match is not None and (means := meaning(key, meta[key])) is not OwnedValueError:
            line = lines[index]
            start, end, _style = _value_span(line, match.end())
            if start == end == len(line.rstrip("\r\n")):  # `key:` and blanks: kept, as written
                start = match.end()
            found[key] = Written.token(line[start:end], means)
    return found


def _bare(line: str) -> bool:
    """Whether an owned key's line holds its value and nothing else (no comment): the line
    a review appends, which an undo may take out whole."""
    match = _OWNED_LINE.match(line)
    assert match is not None  # `owned_lines` found this line by this pattern
    _start, end, _style = _value_span(line, match.end())
    return not line[end:].strip()


def verify_edit(old_meta: dict, new_block: str, updates: dict, appended: list[str],
                removed: Collection[str] = ()) -> None:
    """Parse the edited block and check that only the intended values changed."""
    try:
        new_meta = parse_block(new_block)
    except NoteFormatError:
        raise NoteFormatError("refusing to write: the edited metadata block would not parse") from None
    if list(new_meta) != [key for key in old_meta if key not in removed] + appended:
        raise NoteFormatError("refusing to write: the edit would change which keys the note has")
    for key, new_value in new_meta.items():
        if key in updates:
            old_value = old_meta.get(key)
            ok = meaning(key, new_value) == meaning(key, updates[key]) and (
                old_value is None or new_value is None or _kind(key, new_value) == _kind(key, old_value)
                # a plain value YAML reads as text but the app as a number or date (`1e-3`,
                # `09`, `2026-W10-1`): written as the number or date it means
                or (isinstance(old_value, str) and not isinstance(new_value, str))
                or isinstance(updates[key], Written))  # the note's own token, its own type
        else:
            old_value = old_meta[key]
            ok = new_value == old_value or repr(new_value) == repr(old_value)
        if not ok:
            raise NoteFormatError(f"refusing to write: the edit would change '{key}' unexpectedly")


def same_meaning(key: str, a, b) -> bool:
    """Whether two values of an owned key mean the same (`review_count` null, absent and 0 do;
    so do '3' and 3; a `Written` token by what it means)."""
    return meaning(key, a) is not OwnedValueError and meaning(key, a) == meaning(key, b)


def meaning(key: str, value):
    """What a value of an owned key means, as a note's attributes hold it (`owned_value`):
    `ABSENT` and null mean what a missing key means; a value no note may hold is
    `OwnedValueError`, never equal to a value (so it never agrees)."""
    if isinstance(value, Written):
        return value.means
    try:
        return owned_value(key, None if value is ABSENT else value)
    except OwnedValueError:
        return OwnedValueError


def edit_review_keys(text: str, updates: dict) -> str:
    """A note's (BOM-less) text with its review keys updated; the note must have a block."""
    layout = find_layout(text)
    if not layout.has_block:
        raise NoteFormatError("the note has no metadata block")
    block = text[layout.block_start:layout.block_end]
    new_block = edit_block(block, updates, layout.newline)
    return text[:layout.block_start] + new_block + text[layout.block_end:]
