"""Reading one note's text: decoding, the `---` metadata block, title and answer.

Pure functions over strings, shared by loading, write-back and import.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import PurePosixPath

from studyapp.textwidth import shown

BOM = "\ufeff"
_FENCE_LINE = re.compile(r"^---[ \t]*\r?$", re.M)
_DOTS_LINE = re.compile(r"^\.\.\.[ \t]*\r?$", re.M)
_HEADING_OR_CODE_FENCE = re.compile(r"^(?:(```|~~~)|(#{1,2})[ \t]+(.*)$)", re.M)
"""A fence, or a `#`/`##` heading and its text (trailing blanks and CR stripped in code: a lazy
`(.*?)[ \t]*\r?$` backtracked quadratically over a long run of blanks inside the line)."""
_ODD_LINE_BREAK = re.compile("\r(?!\n)|[\x85\u2028\u2029]")
"""Characters YAML reads as a line break but the line editor of write-back does not."""
_BREAK_NAMES = {"\r": "a lone CR", "\x85": "NEL (U+0085)", "\u2028": "U+2028", "\u2029": "U+2029"}
PLAIN_TITLE_MAX_CHARS = 80
"""A first line that is not a heading is the title only when it is at most this long."""
_UNSHOWN_LINE = re.compile(r"(?:\*[ \t]*){3,}|(?:-[ \t]*){3,}|(?:_[ \t]*){3,}|<!--.*-->")
"""A stripped line a markdown viewer shows as no text: a thematic break (`---`, `***`, `___`,
`- - -`) or a one-line HTML comment (`<!-- generated -->`). The title is looked for below it."""

class NoteFormatError(ValueError):
    """The note cannot be read safely; the message is one line a user understands."""


def decode(raw: bytes) -> tuple[str, bool]:
    """UTF-8 text without its BOM, and whether a BOM was there."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise NoteFormatError(
            f"not valid UTF-8 (byte 0x{raw[exc.start]:02x} at offset {exc.start})"
        ) from None
    if text.startswith(BOM):
        return text[1:], True
    return text, False


@dataclass(frozen=True)
class Layout:
    """Where the metadata block sits in a note's text (offsets into the BOM-less text)."""

    has_block: bool
    block_start: int = 0
    """First character after the opening `---` line."""
    block_end: int = 0
    """First character of the closing `---` line."""
    body_start: int = 0
    """First character after the closing `---` line (its line ending included)."""
    newline: str = "\n"
    """The line ending the note uses ("\\r\\n" or "\\n")."""


def detect_newline(text: str) -> str:
    first = text.find("\n")
    return "\r\n" if first > 0 and text[first - 1] == "\r" else "\n"


def check_line_endings(text: str) -> None:
    """Refuse notes whose lines end in a lone CR (classic Mac OS): the block's fences would go
    unseen, and a first review would put a second block in front of the first."""
    if "\r" not in text:
        return
    lone_cr = text.count("\r") - text.count("\r\n")
    if lone_cr and (lone_cr >= text.count("\n") or text.startswith("---\r") and text[4:5] != "\n"):
        raise NoteFormatError("lines end in CR only (old Mac format): studyapp reads LF or CRLF "
                              "notes; convert the line endings to review it")


def find_layout(text: str) -> Layout:
    """Locate the block; raises NoteFormatError for an opening `---` that is never closed,
    or for CR-only line endings."""
    check_line_endings(text)
    newline = detect_newline(text)
    first_end = text.find("\n")
    first_line = text if first_end < 0 else text[:first_end]
    if first_line.rstrip(" \t\r") != "---":
        if _MAY_OPEN_LATE.match(first_line):
            _refuse_a_late_block(text)
        return Layout(False, newline=newline)
    if first_end < 0:
        raise NoteFormatError("metadata block opened with '---' but never closed")
    block_start = first_end + 1
    close = _FENCE_LINE.search(text, block_start)
    if close is None:
        if _DOTS_LINE.search(text, block_start):
            raise NoteFormatError("metadata block closed by '...' (YAML's document end), which Obsidian does not "
                                  "read as its close: write '---' there")
        raise NoteFormatError("metadata block opened with '---' but never closed")
    odd = _ODD_LINE_BREAK.search(text, block_start, close.start())
    if odd:
        raise NoteFormatError(
            f"metadata block has a line break other than LF or CRLF ({_BREAK_NAMES[odd.group()]}), "
            "which YAML reads as a new line: replace it to review the note")
    body_start = close.end()
    if body_start < len(text) and text[body_start] == "\n":
        body_start += 1
    return Layout(True, block_start, close.start(), body_start, newline)


_REVIEW_KEY_LINE = re.compile(r"^([\"']?)(?:created|last_reviewed|next_review|review_count|mastery_level)\1[ \t]*:",
                              re.M)
"""An owned key's line, the key plain or quoted (as the write-back finds it)."""


_UNSEEN = "[^\\S\\r\\n]|[\u00ad\u061c\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff]"
"""A character that shows as nothing or as a blank: a space of any kind but a line break, and
the zero-width and direction marks."""
_LATE_BLOCK = re.compile(rf"\A((?:(?:{_UNSEEN})*\r?\n)*)((?:{_UNSEEN})*)---[ \t]*\r?\n((?:.*\n)*?)---[ \t]*\r?$",
                         re.M)
"""A block below lines that show as blank, or whose `---` has unseen characters in front of it
(a space, a second BOM): groups 1 and 2 hold those, group 3 the block."""
_MAY_OPEN_LATE = re.compile(rf"(?:{_UNSEEN})*(?:\r?$|---)")
"""A first line that may begin such a block or an `_ODD_FENCE`: only unseen characters, or
unseen characters then `---`."""
_ODD_FENCE = re.compile(rf"\A---(?=(?:{_UNSEEN})*?[^ \t\r\n])(?:{_UNSEEN})+\r?\n((?:.*\n)*?)---[ \t]*\r?$", re.M)
"""A block whose opening `---` is followed by unseen characters other than plain spaces and
tabs (a no-break space pasted from the web, a zero-width space, a form feed): YAML and Obsidian
read it as text."""
_ODD_BYTES = (rb"(?:[\x0b\x0c\x1c-\x1f]|\xc2[\x85\xa0\xad]|\xd8\x9c|\xe1\x9a\x80|\xe1\xa0\x8e"
              rb"|\xe2\x80[\x80-\x8f\xa8-\xaf]|\xe2\x81[\x9f-\xa4\xa6-\xa9]|\xe3\x80\x80|\xef\xbb\xbf)")
"""`_UNSEEN` but spaces and tabs, in UTF-8 (a superset: a head read whole needlessly is only slower)."""
_BLANK_BYTES = rb"(?:[ \t]|" + _ODD_BYTES + rb")"
_LATE_START = re.compile(rb"(?:\xef\xbb\xbf)?(?:(?:" + _BLANK_BYTES + rb"*\r?\n)+" + _BLANK_BYTES + rb"*---|"
                         + _BLANK_BYTES + rb"+---|---[ \t]*" + _ODD_BYTES + rb")")


def may_hold_a_late_block(raw: bytes) -> bool:
    """Whether a file's bytes open like a block below blank lines (`_refuse_a_late_block`): a
    load that read only a note's head then reads it whole, since the block may close past it."""
    return _LATE_START.match(raw) is not None


def late_block_problem(raw: bytes) -> str | None:
    """`_refuse_a_late_block`'s reason for a whole file, None when it holds no such block. Bytes
    that are not UTF-8 are replaced first: a load that found a note's head sound reads the rest
    for this check alone, and bytes past the head are the body's, checked when it is shown."""
    try:
        _refuse_a_late_block(raw.decode("utf-8-sig", "replace"))
    except NoteFormatError as exc:
        return str(exc)
    return None


def _refuse_a_late_block(text: str) -> None:
    """A review block below blank lines, or opened by `---` and an odd space, is text to
    Obsidian and YAML alike: a review would add a second block in front and leave the note's
    schedule behind, so the note is refused with the fix. A `---` rule with no review key
    below it stays body text."""
    late = _LATE_BLOCK.match(text)
    if late is not None and _REVIEW_KEY_LINE.search(late.group(3)):
        if late.group(1):
            raise NoteFormatError("the metadata block does not start on the first line (lines that look blank "
                                  "before its '---'), so it is read as text: remove those lines to review the note")
        space = next(ch for ch in late.group(2) if ch not in " \t") if late.group(2).strip(" \t") else " "
        raise NoteFormatError(f"the metadata block's opening '---' has {_named(space)} in front of it, so it is "
                              "read as text: delete it to review the note")
    odd = _ODD_FENCE.match(text)
    if odd is not None and _REVIEW_KEY_LINE.search(odd.group(1)):
        space = next(ch for ch in text[3:text.index("\n")] if ch not in " \t\r")
        raise NoteFormatError(f"the metadata block's opening '---' is followed by U+{ord(space):04X} "
                              "(an unseen character, not a plain space), so it is read as text: delete it "
                              "to review the note")


def _named(ch: str) -> str:
    """A blank character as the fix names it: a space, a tab, or U+XXXX (an unseen character)."""
    return {" ": "a space", "\t": "a tab"}.get(ch, f"U+{ord(ch):04X} (an unseen character)")


def parse_block(block: str) -> dict:
    """The block's mapping (empty block: {}); raises NoteFormatError for anything else, and for
    a mapping whose owned keys a review could not write back line by line (a key on two lines,
    in a flow-style `{...}` block, with its value on the next line)."""
    from studyapp.vault.bounds import check_block_size, check_yaml_bounds
    from studyapp.vault.fastyaml import parse_simple_block

    check_block_size(block)
    meta = parse_simple_block(block)  # the users' common shape, without building YAML nodes
    if meta is not None:
        return meta
    _refuse_unprintable(block)
    check_yaml_bounds(block)  # depth, alias expansion and number size, before anything is built
    import yaml  # here, not at the top: a warm `due` never parses YAML and skips the import

    SafeLoader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    try:
        meta = yaml.load(block, Loader=SafeLoader)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        where = f" at line {mark.line + 2}" if mark is not None else ""  # +1 for 1-based, +1 for '---'
        problem = (exc.problem or exc.context or "syntax error").strip()
        raise NoteFormatError(f"metadata block is not valid YAML{where}: {problem}") from None
    except Exception as exc:  # constructor errors: bad dates, unhashable keys, recursion
        _refuse_an_impossible_date(block)
        message = " ".join(str(exc).split()) or type(exc).__name__
        raise NoteFormatError(f"metadata block is not valid YAML: {message}") from None
    if meta is None:
        return {}
    if not isinstance(meta, dict):
        raise NoteFormatError(_not_a_mapping(meta))
    from studyapp.vault.writeback import owned_lines

    first = next((line for line in block.splitlines() if line.strip() and not line.lstrip().startswith("#")), "")
    if meta and first[:1] in (" ", "\t"):  # a review writes its keys at the start of a line
        raise NoteFormatError("the metadata block's keys are indented: a review writes its keys at the "
                              "start of a line, so it could not write this note; take the indentation out")
    try:  # valid YAML a review could not write back is no note (the fast shape always can be)
        if first.startswith("{"):  # a review's lines could not be added to it, nor its keys found
            raise NoteFormatError("the metadata block is one flow-style {...} mapping: a review writes each "
                                  "key on a line of its own, so it could not write this note; write the "
                                  "block as one `key: value` line per key")
        owned_lines(block, meta)
    except NoteFormatError:
        from studyapp.vault.model import owned_value_problem

        if owned_value_problem(meta) is None:  # else that, the more telling problem, is reported
            raise
    return meta


def _refuse_unprintable(block: str) -> None:
    """YAML refuses control characters with its own words ('"<unicode string>", position 96'):
    say which character and on which line of the note."""
    from yaml.reader import Reader  # what YAML's reader refuses, in its own words

    bad = Reader.NON_PRINTABLE.search(block)
    if bad is not None:
        line = block.count("\n", 0, bad.start()) + 2  # +1 for 1-based, +1 for '---'
        raise NoteFormatError(f"metadata block holds a control character (U+{ord(bad.group()):04X}) on line "
                              f"{line}, which YAML does not allow: remove it to review the note")


def _refuse_an_impossible_date(block: str) -> None:
    """YAML itself builds a date from an unquoted `2026-02-30` and fails with Python's words
    ("day is out of range for month"): name the line and its key instead."""
    import yaml

    from studyapp.vault.fastyaml import plain_tag

    constructor = yaml.SafeLoader("")
    try:
        for event in yaml.parse(block, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader)):
            if not (isinstance(event, yaml.ScalarEvent) and event.implicit[0] and event.value
                    and plain_tag(event.value) == "tag:yaml.org,2002:timestamp"):
                continue
            try:
                constructor.construct_yaml_timestamp(yaml.ScalarNode("tag:yaml.org,2002:timestamp", event.value))
            except ValueError as exc:
                line = event.start_mark.line
                text = block.splitlines()[line].split(" #")[0].strip()
                raise NoteFormatError(f"metadata block is not valid YAML at line {line + 2}: {text} is not a "
                                      f"real date ({exc}): fix it in the note, as YYYY-MM-DD") from None
    except yaml.YAMLError:
        return
    finally:
        constructor.dispose()


def _not_a_mapping(meta: object) -> str:
    """Why a block that YAML reads as something other than a mapping is no metadata, in the
    user's words (not Python's type names). Text between the first two `---` lines is most
    often a note that opens with a horizontal rule."""
    if isinstance(meta, list):
        what = "a list ('- item' lines)"
    elif isinstance(meta, str):
        return ("the note's first line is '---', which opens a metadata block, but the lines up to "
                "the next '---' are text, not 'key: value' lines: if that '---' is a horizontal rule, "
                "put a line of text (the title) above it; if it is the metadata block, write 'key: value' lines")
    else:
        what = "a single value"
    return f"metadata block must be a mapping ('key: value' lines), not {what}"


def split_note(text: str) -> tuple[Layout, dict, str]:
    """Layout, parsed metadata and body of a BOM-less note text."""
    layout = find_layout(text)
    if not layout.has_block:
        return layout, {}, text
    meta = parse_block(text[layout.block_start:layout.block_end])
    return layout, meta, text[layout.body_start:]


def _headings(body: str):
    """(level, text, start, end) of `#`/`##` headings outside fenced code blocks."""
    open_fence = None
    for match in _HEADING_OR_CODE_FENCE.finditer(body):
        fence = match.group(1)
        if fence:
            if open_fence is None:
                open_fence = fence
            elif fence == open_fence:
                open_fence = None
            continue
        if open_fence is None:
            yield len(match.group(2)), heading_text(match.group(3)), match.start(), match.end()


def heading_text(text: str) -> str:
    """An ATX heading's text without its blanks and closing hashes (`Title ##` -> `Title`; the
    closing run follows a blank, so `C#` keeps its hash). String methods, not a pattern: a
    heading may hold a run of 100,000 blanks, which a backtracking `[ \t]+#+$` took in squares."""
    text = text.strip(" \t\r")
    without = text.rstrip("#")
    if len(without) < len(text) and (not without or without[-1] in " \t"):
        return without.rstrip(" \t")
    return text


def extract_title(body: str, path: str) -> str:
    """The note's title, from its first non-empty line when that is a `# ` heading or short.

    Users' notes open with `# <question>`; plain notes open with a title line. Only when the first
    line is long do we look further, for a `# ` heading outside code fences: web-clipped notes
    hold unfenced code whose `# comments` would otherwise pass for headings. Else the file name.
    """
    title = title_from_first_line(body)
    if title:
        return title
    for level, text, _start, _end in _headings(body):
        if level == 1 and text:
            return shown(text)
    return PurePosixPath(path).stem


def title_from_first_line(body: str) -> str | None:
    """The title when the first non-empty line decides it ('' when that line does not, None when
    the text has no non-empty line). A note's opening lines are enough to call this, which is
    what lets a load read only the head of each note."""
    for line in body.splitlines():
        line = line.strip().lstrip(BOM).strip()
        if not line or _UNSHOWN_LINE.fullmatch(line):
            continue
        if line.startswith("# ") and heading_text(line[2:]):
            return shown(heading_text(line[2:]))
        if len(line) <= PLAIN_TITLE_MAX_CHARS and not line.startswith(("#", "```", "~~~")):
            return shown(line)
        return ""
    return None


def extract_answer(body: str) -> str:
    """The section under the first `## ` heading, up to the next `## ` or `# ` heading."""
    start = None
    for level, _text, line_start, line_end in _headings(body):
        if start is None:
            if level == 2:
                start = line_end
            continue
        return body[start:line_start].strip()
    return body[start:].strip() if start is not None else ""
