"""The standard metadata block studyapp adds to a note that has none (import, first review)."""

from __future__ import annotations

from datetime import date
from pathlib import PurePosixPath

from studyapp.vault.parse import detect_newline


def default_tags(path: str) -> list[str]:
    """Tags as the users' tool writes them: the note's folder, and folder/file name.

    A note at the top of the vault gets no tags.
    """
    rel = PurePosixPath(path)
    folder = rel.parent.as_posix()
    if folder in ("", "."):
        return []
    return [folder, rel.as_posix()]


def default_block_lines(path: str, today: date) -> str:
    """The block's inner text, in the users' key order and quoting (`created: '2026-11-22'`)."""
    import yaml  # lazily: loading a vault does not need it

    meta = {
        "created": today.isoformat(),
        "last_reviewed": None,
        "next_review": today.isoformat(),
        "review_count": 0,
        "difficulty": "medium",
        "mastery_level": 0.0,
        "tags": default_tags(path),
        "related_outlines": [],
    }
    return yaml.safe_dump(meta, sort_keys=False, allow_unicode=True, default_flow_style=False, width=4096)


def add_default_block(text: str, path: str, today: date) -> str:
    """A BOM-less note text with the standard block put in front; the body stays byte for byte."""
    newline = detect_newline(text)
    inner = default_block_lines(path, today)
    return ("---\n" + inner + "---\n").replace("\n", newline) + text
