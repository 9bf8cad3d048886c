"""Crash-safe file replacement: a reader sees the old bytes or the new bytes, never a mix."""

from __future__ import annotations

import os
from pathlib import Path

TEMP_SUFFIX = ".studyapp-tmp"
"""Temp files are named `.<name>.<random>.studyapp-tmp`: hidden, so no loader mistakes one for a note."""


def _current_umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def atomic_write_bytes(path: str | os.PathLike, data: bytes) -> None:
    """Replace `path` with `data` atomically, keeping its permissions.

    Writes a hidden temp file in the same folder, fsyncs it, renames it over the target and
    fsyncs the folder. A symlink is followed: its target is replaced, the link stays a link.
    """
    target = Path(os.path.realpath(path))
    folder = target.parent
    try:
        mode = os.stat(target).st_mode & 0o7777
    except FileNotFoundError:
        mode = 0o666 & ~_current_umask()
    temp = folder / f".{target.name}.{os.urandom(4).hex()}{TEMP_SUFFIX}"
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        try:
            _write_all(fd, data)
            os.fchmod(fd, mode)
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(temp, target)
    except BaseException:
        try:
            os.unlink(temp)
        except FileNotFoundError:
            pass
        raise
    fsync_dir(folder)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def fsync_dir(folder: Path) -> None:
    """Make a rename durable; a no-op where folders cannot be opened (Windows)."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def atomic_create_bytes(path: str | os.PathLike, data: bytes) -> None:
    """Create `path` with `data` atomically; FileExistsError if something is already there.

    The temp file is hard-linked into place, which fails instead of replacing an existing file.
    """
    target = Path(path)
    temp = target.parent / f".{target.name}.{os.urandom(4).hex()}{TEMP_SUFFIX}"
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    try:
        try:
            _write_all(fd, data)
            os.fsync(fd)
        finally:
            os.close(fd)
        os.link(temp, target)
    finally:
        try:
            os.unlink(temp)
        except FileNotFoundError:
            pass
    fsync_dir(target.parent)
