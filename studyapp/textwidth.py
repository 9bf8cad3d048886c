"""Terminal display width of text, so tables of Chinese titles line up (no wcwidth dependency)."""

from __future__ import annotations

import re
import unicodedata
from typing import Any

_SURROGATE = re.compile("[\ud800-\udfff]")
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
"""Characters a terminal obeys rather than shows (ESC starts colours, titles, cursor moves), and
the bidirectional embeddings, overrides and isolates, which turn the rest of a line around
until closed (an unclosed RIGHT-TO-LEFT OVERRIDE reversed a `due` row, its path included)."""
_CONTROL_BUT_BREAKS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
"""The same, less the line break and the tab, which a block of text keeps."""


_DRAWN_OVER = frozenset({"Mn", "Me"})
"""Marks a terminal draws over the letter before them (Thai vowels and tones, accents,
enclosing circles): no column of their own. Not `unicodedata.combining`, which is 0 for many
of them (Thai's U+0E31-U+0E3A)."""


def char_width(ch: str) -> int:
    if unicodedata.category(ch) in _DRAWN_OVER or ch in "\u200b\u200c\u200d\ufeff\u200e\u200f\u061c":
        return 0  # marks, zero-width joiners, and the left-to-right and right-to-left marks
    return 2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1


def display_width(text: str) -> int:
    if text.isascii():
        return len(text)
    return sum(char_width(ch) for ch in text)


def fit(text: str, width: int) -> str:
    """`text` cut (with an ellipsis) or padded with spaces to exactly `width` columns."""
    if display_width(text) <= width:
        return text + " " * (width - display_width(text))
    out, used = [], 0
    for ch in text:
        w = char_width(ch)
        if used + w > width - 1:
            break
        out.append(ch)
        used += w
    return "".join(out) + "…" + " " * (width - used - 1)


def fit_middle(text: str, width: int) -> str:
    """`text` cut in its middle (with an ellipsis) to at most `width` columns, not padded: a
    path keeps its start and its end (half the width each), where two notes' paths differ."""
    if display_width(text) <= width:
        return text
    if width <= 1:
        return "…"[:width]
    head_width = (width - 1) // 2
    head, used = [], 0
    for ch in text:
        if used + char_width(ch) > head_width:
            break
        head.append(ch)
        used += char_width(ch)
    tail, room = [], width - 1 - used
    for ch in reversed(text):
        if char_width(ch) > room:
            break
        tail.append(ch)
        room -= char_width(ch)
    return "".join(head) + "…" + "".join(reversed(tail))


def valid_text(value: Any) -> Any:
    """`value` (a verdict: dicts, lists, strings) with each lone surrogate as U+FFFD. Learner code
    can raise or print one (and a file name that is not UTF-8 arrives as one); no encoder can
    write it, so it lost the verdict on its way to the terminal, the JSON and the review log."""
    if isinstance(value, str):
        return _SURROGATE.sub("\ufffd", value) if _SURROGATE.search(value) else value
    if isinstance(value, dict):
        return {valid_text(k): valid_text(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(valid_text(v) for v in value)
    return value


def shown(line: str) -> str:
    """A line as text to show: each control character as its symbol (ESC as ␛, BEL as ␇, a
    tab as a space), so that a web-clipped title, a learner's output or another device's file
    name printed by the CLI or drawn by the app never recolours, retitles or rings the terminal."""
    if _CONTROL.search(line) is None:  # nearly always: one scan
        return line
    return _CONTROL.sub(_symbol, line)


def printable(text: str) -> str:
    """`shown` for a block of text: its line breaks and tabs are kept."""
    return _CONTROL_BUT_BREAKS.sub(_symbol, text) if _CONTROL_BUT_BREAKS.search(text) is not None else text


def _symbol(match: re.Match) -> str:
    code = ord(match[0])
    return " " if code == 9 else chr(0x2400 + code) if code < 0x20 else "\u2421" if code == 0x7F else "\ufffd"
