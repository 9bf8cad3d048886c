"""The standard metadata block studyapp adds to a note that has none (import, first review)."""

from __future__ import annotations

import functools
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
    return yaml.dump(meta, Dumper=_dumper(), sort_keys=False, allow_unicode=True,
                     default_flow_style=False, width=4096)


_YAML_LINE_BREAKS = "\x85\u2028\u2029"
"""Characters YAML reads as a line break, which PyYAML writes raw in a quoted string (a path's
tag), where studyapp's parser refuses the block (`parse._ODD_LINE_BREAK`)."""


@functools.cache
def _dumper():
    """PyYAML's safe dumper, writing a string that holds one of `_YAML_LINE_BREAKS` in double
    quotes, where they are escapes (`\\L`, `\\P`, `\\N`): the block parses, the value is the same."""
    import yaml

    class Dumper(yaml.SafeDumper):
        pass

    def string(dumper, value: str):
        quoted = '"' if any(ch in value for ch in _YAML_LINE_BREAKS) else None
        return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=quoted)

    Dumper.add_representer(str, string)
    return Dumper


def add_default_block(text: str, path: str, today: date) -> str:
    """A BOM-less note text with the standard block put in front; the body stays byte for byte."""
    newline = detect_newline(text)
    inner = default_block_lines(path, today)
    return ("---\n" + inner + "---\n").replace("\n", newline) + text
