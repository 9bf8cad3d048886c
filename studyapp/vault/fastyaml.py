"""A strict fast path for the common metadata block: flat `key: scalar` lines and `- item` lists.

PyYAML builds a node graph for every block (~60 µs each, most of a cold load of a large vault).
Blocks in the users' format are much simpler than YAML. `parse_simple_block` reads exactly that
shape and returns what `yaml.load(block, CSafeLoader)` returns; on anything else (nesting, flow
collections other than `[]`, escapes, anchors, tags, block scalars, multi-line values, comments
after a value, tabs, unusual characters, scalars whose type is not a plain str/int/float/bool/
null/date, a key given twice) it returns None and the caller uses PyYAML. Plain scalars are typed with PyYAML's own
implicit resolver table, so `yes`, `on`, `~`, `0x10`, `1e3`, `2026-01-05` mean what they mean to
PyYAML. `tests/test_vault_fastyaml.py` compares it with PyYAML on generated blocks.
"""

from __future__ import annotations

import re
from datetime import date
from typing import Any

from studyapp.vault.bounds import MAX_NUMBER_CHARS

_KEY_LINE = re.compile(r"([A-Za-z_][A-Za-z0-9_-]*):(?: +(.*))?")
_UNSAFE = re.compile(
    "[^\x0a\x20-\x7e\xa0-\u2027\u202a-\ud7ff\ue000-\ufefe\uff00-\ufffd\U00010000-\U0010ffff]"
)
"""Anything but newline, printable ASCII and ordinary printable Unicode: tabs, CR, NEL, the
Unicode line separators, BOMs and control characters make YAML behave specially, so we defer."""
_NOT_PLAIN_START = frozenset("-?:,[]{}#&*!|>'\"%@` ")
"""Indicators (and the space) a plain scalar we accept may not start with."""
_DECIMAL = re.compile(r"[-+]?(?:0|[1-9][0-9]*)")
_SIMPLE_FLOAT = re.compile(r"[-+]?[0-9]+\.[0-9]*")
_ISO_DATE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")
_MISSING = object()
"""Returned by `_scalar` for a value this parser does not handle."""

_resolvers = None


def _implicit_resolvers() -> dict:
    global _resolvers
    if _resolvers is None:
        from yaml.resolver import Resolver

        _resolvers = Resolver.yaml_implicit_resolvers
    return _resolvers


_tags: dict[str, str] = {}
"""Resolved tags of recent scalars: keys and most values repeat from note to note."""


def plain_tag(value: str) -> str:
    """The tag PyYAML's resolver gives a plain scalar (mirrors `BaseResolver.resolve`)."""
    tag = _tags.get(value)
    if tag is not None:
        return tag
    table = _implicit_resolvers()
    tag = "tag:yaml.org,2002:str"
    for candidate, regexp in table.get(value[0] if value else "", []) + table.get(None, []):
        if regexp.match(value):
            tag = candidate
            break
    if len(_tags) >= 4096:
        _tags.clear()
    _tags[value] = tag
    return tag


_BOOLS = {"yes": True, "no": False, "true": True, "false": False, "on": True, "off": False}


def _plain(value: str):
    tag = plain_tag(value)
    if tag == "tag:yaml.org,2002:str":
        return value
    if len(value) > MAX_NUMBER_CHARS:  # a number too long to convert: let the bounds check report it
        return _MISSING
    if tag == "tag:yaml.org,2002:null":
        return None
    if tag == "tag:yaml.org,2002:bool":
        return _BOOLS[value.lower()]
    if tag == "tag:yaml.org,2002:int" and _DECIMAL.fullmatch(value):
        return int(value)
    if tag == "tag:yaml.org,2002:float" and _SIMPLE_FLOAT.fullmatch(value):
        return float(value)
    if tag == "tag:yaml.org,2002:timestamp" and _ISO_DATE.fullmatch(value):
        try:
            return date.fromisoformat(value)
        except ValueError:  # 2026-02-30: let PyYAML report it
            return _MISSING
    return _MISSING


def _scalar(text: str):
    """The value of a one-line scalar (text stripped of the surrounding spaces)."""
    if not text:
        return None
    first = text[0]
    if first == "'":
        if len(text) < 2 or text[-1] != "'":
            return _MISSING
        inner = text[1:-1]
        if "'" in inner.replace("''", ""):
            return _MISSING  # a quote ends the scalar early: something follows it
        return inner.replace("''", "'")
    if first == '"':
        inner = text[1:-1]
        if len(text) < 2 or text[-1] != '"' or '"' in inner or "\\" in inner:
            return _MISSING
        return inner
    if text == "[]":
        return []
    if first in _NOT_PLAIN_START or ": " in text or " #" in text or text[-1] == ":":
        return _MISSING
    return _plain(text)


_SKIP, _ITEM, _KEY, _EMPTY_LIST = "skip", "item", "key", object()
_lines: dict[str, tuple | None] = {}
"""What each recent line means (see `_line`): most lines of a vault's blocks repeat from note
to note (`difficulty: medium`, `related_outlines: []`, dates), so each is worked out once."""


def _line(line: str) -> tuple | None:
    """(_SKIP,), (_ITEM, value) or (_KEY, key, value, has_value) for one line of a block, or
    None when the line is not of the simple shape. A `[]` value is `_EMPTY_LIST` (the caller
    makes a new list each time: the result is shared)."""
    line = line.rstrip(" ")
    if not line or line[0] == "#":
        return (_SKIP,)
    if line[0] == "-" and (len(line) == 1 or line[1] == " "):
        item = _scalar(line[2:].lstrip(" "))
        return None if item is _MISSING else (_ITEM, _EMPTY_LIST if isinstance(item, list) else item)
    match = _KEY_LINE.fullmatch(line)
    if match is None:
        return None
    key = match.group(1)
    if plain_tag(key) != "tag:yaml.org,2002:str":
        return None  # `yes:`, `null:`, `on:` are not string keys
    value = _scalar(match.group(2) or "")
    if value is _MISSING:
        return None
    return (_KEY, key, _EMPTY_LIST if isinstance(value, list) else value,
            match.group(2) is not None)


def parse_simple_block(block: str) -> dict | None:
    """The block's mapping when it has the simple shape, else None (then ask PyYAML)."""
    block = block.replace("\r\n", "\n")
    if _UNSAFE.search(block):
        return None
    meta: dict = {}
    open_list: list | None = None
    """The list a key with an empty value started; `- item` lines append to it."""
    pending_key = None
    """The last key, while its value is still empty (null unless `- item` lines follow)."""
    known = _lines
    for text in block.split("\n"):
        parsed: Any = known.get(text, _MISSING)
        if parsed is _MISSING:
            parsed = _line(text)
            if len(text) <= 200:  # a few MB at most, however odd the vault
                if len(known) >= 8192:
                    known.clear()
                known[text] = parsed
        if parsed is None:
            return None
        kind = parsed[0]
        if kind is _SKIP:
            continue
        if kind is _ITEM:
            if pending_key is not None:
                open_list = meta[pending_key] = []
                pending_key = None
            if open_list is None:
                return None
            item = parsed[1]
            open_list.append([] if item is _EMPTY_LIST else item)
            continue
        _kind, key, value, has_value = parsed
        if key in meta:
            return None  # PyYAML keeps the last; `parse_block` refuses a repeated owned key
        meta[key] = [] if value is _EMPTY_LIST else value
        pending_key = None if has_value else key
        open_list = None
    return meta
