"""The log folder: one append-only JSON-lines file per device.

A device appends only to its own file, one whole line per event, fsync'd before the review
is reported done; it never rewrites a file, and never touches another device's, so a sync tool
(Syncthing, Dropbox, git) merges the folder without conflicts. A line cut short by a crash or
a sync in progress (no newline at the end yet) is ignored on read, and the next append starts
on a fresh line, so it never breaks the file.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from studyapp.atomic import fsync_dir
from studyapp.history.events import Event

LOG_SUFFIX = ".jsonl"


def log_dir(paths, settings) -> Path:
    """Where this device keeps its log: the vault's `.studyapp/log` (default) or the data dir's."""
    return data_dir_log(paths) if settings.history_log == "data-dir" else vault_log(paths)


def vault_log(paths) -> Path:
    return paths.vault_dir / ".studyapp" / "log"


def data_dir_log(paths) -> Path:
    return paths.data_dir / "log"


@dataclass
class LogContents:
    """Every event of every device's file, as read once."""

    events: list[Event] = field(default_factory=list)
    sizes: dict[str, int] = field(default_factory=dict)
    """Bytes read of each device's file (`<device>.jsonl`)."""
    skipped: int = 0
    """Lines that were not events (damaged by hand, or from a newer studyapp)."""


class EventLog:
    """The log folder as seen by one device."""

    def __init__(self, folder: Path, device: str):
        self.folder = Path(folder)
        self.device = device

    @property
    def own_file(self) -> Path:
        return self.folder / f"{self.device}{LOG_SUFFIX}"

    def append(self, *events: Event) -> int:
        """Append whole lines to this device's file and fsync; returns the file's new size."""
        payload = b"".join(
            json.dumps(e.to_json(), ensure_ascii=False, separators=(",", ":")).encode() + b"\n"
            for e in events)
        created = not self.folder.is_dir()
        if created:
            self.folder.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.own_file, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            size = os.fstat(fd).st_size
            if size and _last_byte(self.own_file, size) != b"\n":
                payload = b"\n" + payload  # a torn line from a crash stays a line of its own
            view = memoryview(payload)
            while view:
                view = view[os.write(fd, view):]
            os.fsync(fd)
            end = os.fstat(fd).st_size
        finally:
            os.close(fd)
        if created or size == 0:
            fsync_dir(self.folder)  # the new file's name is durable too
        return end

    def sizes(self) -> dict[str, int]:
        """Each device's file size, without reading them (the cheap "did anything change?")."""
        result: dict[str, int] = {}
        try:
            entries = list(os.scandir(self.folder))
        except (FileNotFoundError, NotADirectoryError):
            return result
        for entry in entries:
            if entry.name.endswith(LOG_SUFFIX) and not entry.name.startswith("."):
                try:
                    result[entry.name[: -len(LOG_SUFFIX)]] = entry.stat().st_size
                except OSError:
                    continue
        return result

    def read(self) -> LogContents:
        """Every device's events (duplicates included: `replay` drops them by id)."""
        contents = LogContents()
        loads = _fast_loads()
        for device in sorted(self.sizes()):
            try:
                raw = (self.folder / f"{device}{LOG_SUFFIX}").read_bytes()
            except OSError:
                continue
            complete = raw.rfind(b"\n") + 1  # past the last newline: torn, or still arriving
            contents.sizes[device] = len(raw)
            for line in raw[:complete].split(b"\n"):
                if not line.strip():
                    continue
                try:
                    item = loads(line)
                except ValueError:  # orjson's error is a ValueError too
                    item = _loads_or_none(line)  # json also takes NaN, which orjson refuses
                    if item is None:
                        contents.skipped += 1
                        continue
                try:
                    contents.events.append(Event.from_json(item))
                except (ValueError, KeyError, TypeError, AttributeError):
                    contents.skipped += 1
        return contents

    def has_events(self) -> bool:
        return any(size > 0 for size in self.sizes().values())


def _loads_or_none(line: bytes):
    try:
        return json.loads(line)
    except ValueError:
        return None


def _fast_loads() -> Callable[[bytes], Any]:
    """orjson's `loads` (two to three times faster than the standard library's), imported when
    a log is read: commands that only stat the log never pay for it."""
    try:
        from orjson import loads
    except ImportError:  # pragma: no cover - a dependency, but a rebuild must work without it
        return json.loads
    return loads


def _last_byte(path: Path, size: int) -> bytes:
    with open(path, "rb") as handle:
        handle.seek(size - 1)
        return handle.read(1)
