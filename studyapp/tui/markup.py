"""Text from outside the app (note titles, paths, learner output, error messages) inside Textual
markup, always as text.

Textual's own `escape` leaves a `[` alone when no `]` closes it, so a learner printing
`scores[/b` broke the markup around it and the MarkupError ended the app.
"""

from __future__ import annotations


def plain(text: str) -> str:
    """`text` for a markup string: every `[` escaped, so nothing in it opens or closes a tag."""
    return text.replace("[", "\\[")
