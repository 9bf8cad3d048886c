"""Text from outside the app (note titles, paths, learner output, error messages) inside Textual
markup, always as text.

Textual's own `escape` leaves a `[` alone when no `]` closes it, so a learner printing
`scores[/b` broke the markup around it and the MarkupError ended the app.
"""

from __future__ import annotations

from studyapp.textwidth import printable


def plain(text: str) -> str:
    """`text` for a markup string: every `[` escaped, so nothing in it opens or closes a tag, and
    shown as `printable` says. A backslash at its end would escape the tag that follows (Textual
    reads `\\[` as a bracket): an invisible zero-width space comes between."""
    text = printable(text).replace("[", "\\[")
    return text + "\u200b" if text.endswith("\\") else text
