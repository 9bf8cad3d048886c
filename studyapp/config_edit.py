"""Change one setting in `config.toml` the way a person would: edit its line (or append one),
leave every other byte of the file as it was, and replace the file atomically."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

from studyapp.atomic import atomic_write_bytes
from studyapp.config import ConfigError, load_settings

_BOM = "\ufeff"
_STRING = r'"(?:[^"\\\n]|\\.)*"|\'[^\'\n]*\''
"""A one-line TOML string value, basic or literal."""


def set_setting(config_file: Path, key: str, value: str) -> None:
    """Set the top-level string setting `key` to `value` in `config_file` (created if missing).

    Raises ConfigError and writes nothing when the file cannot be parsed now, when the edit
    would not read back as exactly this change, or when the file changed while it was edited.
    """
    load_settings(config_file)  # a broken file (or a FIFO, a folder) is reported, never read or rewritten
    try:
        raw = config_file.read_bytes()
    except FileNotFoundError:
        raw = None
    text = "" if raw is None else raw.decode("utf-8")
    bom = _BOM if text.startswith(_BOM) else ""
    new_text = bom + _with_value(text[len(bom):], key, json.dumps(value))
    new_raw = new_text.encode("utf-8")
    _check_only_key_changed(config_file, raw, new_raw, key, value)
    current = config_file.read_bytes() if config_file.exists() else None
    if current != raw:
        raise ConfigError(f"{config_file} changed while it was being edited; try again")
    config_file.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_bytes(config_file, new_raw)


def _with_value(text: str, key: str, literal: str) -> str:
    """`text` with the top-level `key = ...` line's value replaced (its comment kept), else its
    commented-out default (`# key = ...`, as the first-run template has it) made live, else
    the line added before the first table (or at the end)."""
    lines = text.splitlines(keepends=True)
    key_line = re.compile(
        rf"^(?P<lead>[ \t]*(?:{re.escape(key)}|\"{re.escape(key)}\"|'{re.escape(key)}')[ \t]*=[ \t]*)"
        rf"(?P<value>{_STRING}|[^#\r\n]*?)(?P<rest>[ \t]*(?:#[^\r\n]*)?(?:\r\n|\n|\r)?)$"
    )
    first_table = None
    commented = None
    for index, line in enumerate(lines):
        if line.lstrip().startswith("["):
            first_table = index
            break
        match = key_line.match(line)
        if match:
            lines[index] = match["lead"] + literal + match["rest"]
            return "".join(lines)
        if commented is None and re.match(rf"^#[ \t]*{re.escape(key)}[ \t]*=", line):
            commented = index  # the first-run template's `# key = default`
    newline = "\r\n" if "\r\n" in text else "\n"
    if commented is not None:
        ending = lines[commented][len(lines[commented].rstrip("\r\n")):] or newline
        lines[commented] = f"{key} = {literal}{ending}"
        return "".join(lines)
    entry = f"{key} = {literal}{newline}"
    if first_table is not None:
        lines.insert(first_table, entry)
        return "".join(lines)
    if text and not text.endswith(("\n", "\r")):
        text += newline
    return text + entry


def _check_only_key_changed(config_file: Path, old_raw: bytes | None, new_raw: bytes, key: str,
                            value: str) -> None:
    """Parse both versions: the new one must hold the old settings with only `key` set to `value`."""
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover
        import tomli as tomllib

    old = tomllib.loads(old_raw.decode("utf-8-sig")) if old_raw else {}
    try:
        new = tomllib.loads(new_raw.decode("utf-8-sig"))
    except tomllib.TOMLDecodeError:
        new = None
    if new != {**old, key: value}:
        raise ConfigError(f"{config_file}: could not set {key} by editing one line; edit the file by hand")
