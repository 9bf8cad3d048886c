"""What an undo can revert: named by the review session (the core) and by the view objects
the TUI draws, in a module of its own so neither has to import the other (the views stay
light enough for the first frame; the core never needs the views)."""

from __future__ import annotations

from enum import Enum


class UndoKind(Enum):
    """What an undo reverted."""

    RATING = "rating"
    SUSPENSION = "suspension"
