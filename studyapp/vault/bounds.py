"""Limits on a note's size and on the YAML work its metadata block may ask for.

A single note must never take the vault down. PyYAML's composer and constructor recurse (a block
nested ~400 deep raises RecursionError; 100,000 deep crashes libyaml's composer in C), aliases
expand (a "billion laughs" block of a few hundred bytes stands for hundreds of millions of values
once anything walks it), and Python refuses to convert integers over 4,300 digits. So before a
block is composed, `check_yaml_bounds` walks its event stream (the parser is a state machine: no
recursion, linear time, constant stack) and stops at the first limit crossed; the block's size is
checked before even that.
"""

from __future__ import annotations

import re

from studyapp.vault.parse import NoteFormatError

MAX_NOTE_BYTES = 64 * 1024 * 1024
"""A note file larger than this is not read (real notes are at most a few MiB)."""
MAX_BLOCK_CHARS = 64 * 1024
"""A metadata block longer than this is not parsed (the users' blocks are a few hundred bytes)."""
MAX_DEPTH = 32
"""Nested lists and mappings, counting the top-level mapping (the users' blocks: 2)."""
MAX_VALUES = 10_000
"""Values in the block with every alias expanded: what anything walking the metadata will see."""
MAX_NUMBER_CHARS = 1000
"""A plain scalar YAML reads as a number may be at most this long (Python converts ints of
at most 4,300 digits; nothing in a note needs a thousand)."""

_INT_TAG = "tag:yaml.org,2002:int"
_FLOAT_TAG = "tag:yaml.org,2002:float"
_MAYBE_NUMBER = re.compile(r"[-+.0-9]")


def check_block_size(block: str) -> None:
    if len(block) > MAX_BLOCK_CHARS:
        raise NoteFormatError(
            f"metadata block is {len(block):,} characters long (at most {MAX_BLOCK_CHARS:,} are read)")


def is_long_number(value: str) -> bool:
    """A plain scalar YAML would read as an int or float, longer than MAX_NUMBER_CHARS."""
    if len(value) <= MAX_NUMBER_CHARS or not _MAYBE_NUMBER.match(value):
        return False
    from studyapp.vault.fastyaml import plain_tag

    return plain_tag(value) in (_INT_TAG, _FLOAT_TAG)


def check_yaml_bounds(block: str) -> None:
    """Raise NoteFormatError when composing `block` would go past the limits above.

    Syntax errors are left to the real parse, which reports them with a line number.
    """
    import yaml

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)(block)
    values = 0
    """Values so far, with aliases counted as the values they stand for."""
    open_nodes: list[tuple[str | None, int]] = []
    """(anchor, `values` when it started) of each list or mapping still open."""
    anchored: dict[str, int] = {}
    """Finished anchored nodes: name -> the values the node holds (itself included)."""
    try:
        while True:
            try:
                event = loader.get_event()
            except yaml.YAMLError:
                return
            if event is None or isinstance(event, yaml.StreamEndEvent):
                return
            if isinstance(event, yaml.CollectionStartEvent):
                if len(open_nodes) >= MAX_DEPTH:
                    raise NoteFormatError(f"metadata block is nested more than {MAX_DEPTH} levels deep")
                open_nodes.append((event.anchor, values))
                values += 1
            elif isinstance(event, yaml.CollectionEndEvent):
                anchor, started = open_nodes.pop()
                if anchor is not None:
                    anchored[anchor] = values - started
            elif isinstance(event, yaml.ScalarEvent):
                if len(event.value) > MAX_NUMBER_CHARS and (
                        event.tag in (_INT_TAG, _FLOAT_TAG)
                        or (not event.style and event.implicit[0] and is_long_number(event.value))):
                    raise NoteFormatError(
                        f"metadata block holds a number {len(event.value):,} digits long "
                        f"(at most {MAX_NUMBER_CHARS:,} are read)")
                values += 1
                if event.anchor is not None:
                    anchored[event.anchor] = 1
            elif isinstance(event, yaml.AliasEvent):
                size = anchored.get(event.anchor)
                if size is None:
                    raise NoteFormatError(
                        f"metadata block has an alias *{event.anchor} to a value that contains it "
                        "or is not defined before it")
                values += size
            if values > MAX_VALUES:
                raise NoteFormatError(
                    f"metadata block expands to more than {MAX_VALUES:,} values "
                    "(aliases repeating aliases: a 'billion laughs' block?)")
    finally:
        loader.dispose()
