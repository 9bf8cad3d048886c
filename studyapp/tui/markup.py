"""Text from outside the app (note titles, paths, learner output, error messages) inside Textual
markup, always as text.

Textual's own `escape` leaves a `[` alone when no `]` closes it, so a learner printing
`scores[/b` broke the markup around it and the MarkupError ended the app.
"""

from __future__ import annotations

import re

_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")
"""Control characters but the line break and the tab: a terminal obeys them (ESC colours,
clears the screen, moves the cursor) rather than showing them."""


def plain(text: str) -> str:
    """`text` for a markup string: every `[` escaped, so nothing in it opens or closes a tag, and
    shown as `printable` says. A backslash at its end would escape the tag that follows (Textual
    reads `\\[` as a bracket): an invisible zero-width space comes between."""
    text = printable(text).replace("[", "\\[")
    return text + "\u200b" if text.endswith("\\") else text


def printable(text: str) -> str:
    """`text` with each control character as its symbol (ESC as ␛), line breaks and tabs kept:
    learner output cannot recolour, move or clear the screen."""
    return _CONTROL.sub(_symbol, text) if _CONTROL.search(text) is not None else text


def _symbol(match: re.Match) -> str:
    code = ord(match[0])
    return chr(0x2400 + code) if code < 0x20 else "\u2421" if code == 0x7F else "\ufffd"
