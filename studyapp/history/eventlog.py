"""The log folder: one append-only JSON-lines file per device.

A device appends only to its own file, one whole line per event, fsync'd before the review
is reported done; it never rewrites a file, and never touches another device's, so a sync tool
(Syncthing, Dropbox, git) merges the folder without conflicts. A line cut short by a crash or
a sync in progress (no newline at the end yet) is ignored on read, and the next append starts
on a fresh line, so it never breaks the file.
"""

from __future__ import annotations

import errno
import json
import os
import stat
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from studyapp.atomic import fsync_dir
from studyapp.history.events import BadEvent, Event

LOG_SUFFIX = ".jsonl"
ADOPTED = "adopted"
"""The field marking a review a device wrote into its own file for another device, whose file
shrank or went (`sync.adopt_database`): kept, so that no review is lost, but not its to undo."""


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
    first_skipped: str | None = None
    """`<file> line <n>: <why>` of the first such line, for the one line that reports them."""
    not_files: list[str] = field(default_factory=list)
    """Names in the folder that look like logs but are not regular files (a FIFO, a folder)."""

    def skip(self, path: Path, number: int, why: str) -> None:
        self.skipped += 1
        if self.first_skipped is None:
            self.first_skipped = f"{path} line {number}: {why}"

    def problems(self, folder: Path) -> list[str]:
        """What was left out, one line each (said when a replay reads the log)."""
        lines = []
        if self.skipped == 1:
            lines.append(f"1 line of the review log left out, as no event this studyapp can "
                         f"use: {self.first_skipped}")
        elif self.skipped:
            lines.append(f"{self.skipped} lines of the review log left out, as no events this "
                         f"studyapp can use; the first: {self.first_skipped}")
        if self.not_files:
            lines.append(f"left out of the review log, as not a regular file: "
                         f"{', '.join(sorted(self.not_files))} (in {folder})")
        return lines


class EventLog:
    """The log folder as seen by one device."""

    def __init__(self, folder: Path, device: str):
        self.folder = Path(folder)
        self.device = device

    @property
    def own_file(self) -> Path:
        return self.folder / f"{self.device}{LOG_SUFFIX}"

    def named_own(self, name: str) -> bool:
        """Whether a log file's name (less `.jsonl`) is this device's: its own file, or a copy a
        sync tool named after it (`<id>.sync-conflict-…`, Dropbox's `<id> (conflicted copy …)`)."""
        return name == self.device or (name.startswith(self.device) and not name[len(self.device)].isalnum())

    def own_ids(self) -> set[str]:
        """The ids of this device's events: the reviews `undo` here may take back (another
        device's are that device's to undo). By each event's device, wherever it sits: in this
        device's file or in a sync tool's conflict copy of it (`<id>.sync-conflict-….jsonl`),
        less the reviews this device wrote back into its file for a device whose file shrank or
        went (`ADOPTED`): those are not its own."""
        ids: set[str] = set()
        loads = _fast_loads()
        for name, size in self._entries().items():
            if size is None or not self.named_own(name):  # other devices' files hold none of its events
                continue
            for line in (_read_regular(self.folder / f"{name}{LOG_SUFFIX}") or b"").splitlines():
                try:
                    event = loads(line)
                except ValueError:
                    continue
                if isinstance(event, dict) and isinstance(event.get("id"), str) \
                        and event.get("device") == self.device and not event.get(ADOPTED):
                    ids.add(event["id"])
        return ids

    def check_writable(self) -> None:
        """UserError when this device's file cannot take a line (a folder or a FIFO in its place,
        no permission): asked before a review writes its note, so a review the log cannot hold
        changes nothing, instead of leaving a note written and its log line to a later repair."""
        from studyapp.errors import UserError

        try:
            for place in (self.folder, self.folder.parent):  # the log folder and .studyapp, when there
                if os.path.lexists(place) and not place.is_dir():
                    raise OSError(errno.ENOTDIR, f"{place} is not a folder")
            if self.own_file.exists():
                os.close(self._open_own(create=False)[0])
            elif not os.access(self.folder if self.folder.is_dir() else self.folder.parent.parent, os.W_OK):
                raise OSError(errno.EACCES, "not writable")
        except OSError as exc:
            raise UserError(f"cannot write the review log {self.own_file} ({exc.strerror or exc}): "
                            "nothing was changed; move it away or make it writable") from None

    def _open_own(self, create: bool) -> tuple[int, int]:
        """This device's file opened to append, and its size; OSError when its place holds no
        regular file. Non-blocking: opening a FIFO put in its place would wait for a reader
        forever."""
        flags = os.O_WRONLY | os.O_APPEND | _NONBLOCK | (os.O_CREAT if create else 0)
        fd = os.open(self.own_file, flags, 0o644)
        status = os.fstat(fd)
        if not stat.S_ISREG(status.st_mode):
            os.close(fd)
            raise OSError(errno.EINVAL, f"{self.own_file} is not a regular file: move it away, and "
                          "this device's reviews are logged again")
        return fd, status.st_size

    def append(self, *events: Event) -> int:
        """Append whole lines to this device's file and fsync; returns the file's new size."""
        payload = b"".join(
            json.dumps(e.to_json(), ensure_ascii=False, separators=(",", ":")).encode() + b"\n"
            for e in events)
        created = not self.folder.is_dir()
        if created:
            holder = self.folder.parent.parent  # the vault (or the data dir's parent)
            if not holder.is_dir():  # moved or removed: never make it again, empty, at its old path
                raise FileNotFoundError(errno.ENOENT, "the folder holding the review log is gone",
                                        str(holder))
            self.folder.mkdir(parents=True, exist_ok=True)
        fd, size = self._open_own(create=True)
        try:
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
        return {device: size for device, size in self._entries().items() if size is not None}

    def _entries(self) -> dict[str, int | None]:
        """Each `<device>.jsonl` name's size; None for one that is not a regular file."""
        result: dict[str, int | None] = {}
        try:
            entries = list(os.scandir(self.folder))
        except (FileNotFoundError, NotADirectoryError):
            return result
        for entry in entries:
            if entry.name.endswith(LOG_SUFFIX) and not entry.name.startswith("."):
                try:
                    status = entry.stat()
                except OSError:
                    continue
                regular = stat.S_ISREG(status.st_mode)
                result[entry.name[: -len(LOG_SUFFIX)]] = status.st_size if regular else None
        return result

    def read(self) -> LogContents:
        """Every device's events (duplicates included: `replay` drops them by id)."""
        contents = LogContents()
        loads = _fast_loads()
        for device, size in sorted(self._entries().items()):
            path = self.folder / f"{device}{LOG_SUFFIX}"
            if size is None:
                contents.not_files.append(path.name)
                continue
            raw = _read_regular(path)
            if raw is None:
                continue
            complete = raw.rfind(b"\n") + 1  # past the last newline: torn, or still arriving
            contents.sizes[device] = len(raw)
            for number, line in enumerate(raw[:complete].split(b"\n"), 1):
                if not line.strip():
                    continue
                try:
                    item = loads(line)
                except ValueError:  # orjson's error is a ValueError too
                    item = _loads_or_none(line)  # json also takes NaN, which orjson refuses
                    if item is None:
                        contents.skip(path, number, "not JSON")
                        continue
                try:
                    contents.events.append(Event.from_json(item))
                except BadEvent as exc:
                    contents.skip(path, number, str(exc))
        return contents

    def has_events(self) -> bool:
        return any(size > 0 for size in self.sizes().values())


_NONBLOCK = getattr(os, "O_NONBLOCK", 0)


def _read_regular(path: Path) -> bytes | None:
    """The file's bytes; None when it is gone, unreadable, or no regular file (a FIFO swapped
    in after the folder was listed: opened without blocking, then told apart)."""
    try:
        fd = os.open(path, os.O_RDONLY | _NONBLOCK | getattr(os, "O_BINARY", 0))
    except OSError:
        return None
    with open(fd, "rb") as handle:
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                return None
            return handle.read()
        except OSError:
            return None


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
