"""Crash-safe file replacement: a reader sees the old bytes or the new bytes, never a mix.

One mechanism in one file (~430 lines): the temp file, the exchange-rename with its compare
and swap-back, the read lease, and the fallbacks where the system lacks them are steps of the
same write, and reading them apart would hide how a concurrent edit is kept.
"""

from __future__ import annotations

import errno
import functools
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

TEMP_SUFFIX = ".studyapp-tmp"
"""Temp files are named `.<name>.<8 hex>.studyapp-tmp`: hidden, so no loader mistakes one for a note."""
NAME_MAX = 255
"""The bytes a file name may have (ext4, APFS, most file systems): a note may be named that long."""
CUT_MARK = "…"
"""Ends a name cut to fit `NAME_MAX` (a temp file's, a conflict copy's): the rest is the target's."""


def fitted_name(stem: str, tail: str, mark: str = CUT_MARK, limit: int = NAME_MAX) -> str:
    """`stem + tail` if it fits `limit` bytes as the file system counts them; else `stem` cut at
    a character, then `mark`, then `tail` (a long Chinese title is three bytes a character)."""
    if len(os.fsencode(stem + tail)) <= limit:
        return stem + tail
    room = limit - len(os.fsencode(mark + tail))
    kept = 0
    for index, ch in enumerate(stem):
        kept += len(os.fsencode(ch))  # a byte that is not UTF-8 (surrogateescape) is one
        if kept > room:
            return stem[:index] + mark + tail
    return stem + mark + tail  # not reached: the stem alone did not fit


def temp_path(target: Path) -> Path:
    """A new temp file's path beside `target`: `.<name>.<8 hex>.studyapp-tmp`, the name cut
    (and marked) so that the whole fits `NAME_MAX` bytes beside a note of the longest name."""
    name = fitted_name(target.name, f".{os.urandom(4).hex()}{TEMP_SUFFIX}", limit=NAME_MAX - 1)
    return target.parent / f".{name}"


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
    temp = temp_path(target)
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        try:
            _write_all(fd, data)
            _carry_over(target, fd)
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


def _carry_over(target: Path, fd: int) -> None:
    """Give the temp file `fd` what the file it replaces has besides its bytes: its owner and
    group where this process may set them (root may; a member of the file's group may keep the
    group, as in a vault shared through one), its extended attributes (Finder tags, a sync
    client's marks, ACLs) where it may write them, then its mode (after the owner: a chown
    clears set-id bits). A new file gets the umask's mode."""
    try:
        st = os.stat(target)
    except FileNotFoundError:
        os.fchmod(fd, 0o666 & ~_current_umask())
        return
    for uid, gid in ((st.st_uid, st.st_gid), (-1, st.st_gid)):
        try:
            os.fchown(fd, uid, gid)
            break
        except (OSError, AttributeError):  # not ours to give away; no chown on this system
            continue
    for name in _xattr_names(target):
        try:
            os.setxattr(fd, name, os.getxattr(target, name, follow_symlinks=False))
        except OSError:  # gone meanwhile, or one only a privileged process may set (security.*)
            pass
    os.fchmod(fd, st.st_mode & 0o7777)


def _xattr_names(target: Path) -> list[str]:
    try:
        return os.listxattr(target, follow_symlinks=False)
    except (OSError, AttributeError):  # none on this file system, or no xattrs on this system
        return []


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
    temp = temp_path(target)
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


# -- replacing a file someone else may be editing ---------------------------------------------

SETTLE_SECONDS = 2.0
"""How long a checked replace waits for another program to finish writing the file."""

PATIENCE_SECONDS = 3.0
"""How long a checked replace keeps starting again while the file keeps changing under it."""

RENAME_EXCHANGE = 2
"""Linux `renameat2` flag (and macOS `renamex_np`'s RENAME_SWAP): swap two names atomically."""


class FileBusy(OSError):
    """Another program kept the file open for writing longer than a replace waits."""


class ReplaceConflict(Exception):
    """The file kept changing, or two edits could not be merged; nothing of theirs was lost."""


@dataclass(frozen=True)
class Replacement:
    """What a checked replace did."""

    before: bytes
    """The exact bytes the new content replaced (what an exact undo puts back)."""
    after: bytes


def replace_checked(path: str | os.PathLike, make: Callable[[bytes], bytes],
                    *, patience_seconds: float = PATIENCE_SECONDS,
                    settle_seconds: float = SETTLE_SECONDS) -> Replacement:
    """Replace `path` with `make(current bytes)` so that no edit made meanwhile is lost.

    On Linux the new file is swapped in with `renameat2(RENAME_EXCHANGE)`, which leaves the
    file it displaced in our hands: if that is not exactly what `make` was given, an edit
    landed in between, so the swap is undone at once and `make` runs again on the newer text.
    Reads take a read lease first, which waits until nobody holds the file open for writing,
    so an editor that writes in place (append, truncate and write) finishes before we compare.
    Elsewhere the file is compared again just before an ordinary rename (see README).
    `make` may raise to refuse; it must return its input unchanged to mean "nothing to do".
    """
    target = Path(os.path.realpath(path))
    carried: list[tuple[bytes, bytes]] = []
    """(our text, their edit of it): edits saved onto our version while it was briefly visible."""
    give_up = time.monotonic() + patience_seconds
    while time.monotonic() < give_up:
        current, identity = read_settled(target, settle_seconds)
        new = make(current)
        try:
            for base, theirs in carried:
                new = merge_lines(base, new, theirs)
        except ReplaceConflict as exc:
            raise ReplaceConflict(f"{exc}; {_keep_for_the_user(target, carried)}") from None
        if new == current:
            return Replacement(current, current)
        temp = _write_temp(target, new)
        kept = swapped = False
        try:
            if file_identity(os.stat(target)) != identity:
                continue  # changed while we worked: start again from the new content
            if not _exchange(temp, target):
                if target.read_bytes() != current:
                    continue
                os.replace(temp, target)  # no atomic swap here: the best portable check
                kept = True
                fsync_dir(target.parent)
                return Replacement(current, new)
            swapped = True  # ours at the note's path, the file it displaced at the temp path
            try:
                displaced, _ = read_settled(temp, settle_seconds)
            except FileBusy:
                displaced = None  # a writer still holds the old file open: give it back
            if displaced == current:
                swapped = False
                fsync_dir(target.parent)
                return Replacement(current, new)
            _exchange(temp, target)  # put their edit back, then start again from it
            swapped = False
            try:
                ours_now, _ = read_settled(temp, settle_seconds)
            except FileBusy:  # a program writes into our copy and will not stop: keep it
                copy = _new_conflict_copy(target, functools.partial(os.link, temp))  # the temp goes below
                raise ReplaceConflict(f"another program kept writing into studyapp's copy; "
                                      f"it is kept in {copy.name}") from None
            if ours_now != new:
                carried.append((new, ours_now))
        finally:
            if swapped:  # stopped (Ctrl-C) before the displaced file was judged: it may hold an
                _exchange(temp, target)  # edit being saved, so it goes back, and ours is dropped
            if not kept:
                _unlink_quietly(temp)
    if carried:
        raise ReplaceConflict(f"it keeps changing on disk; {_keep_for_the_user(target, carried)}")
    raise ReplaceConflict("it keeps changing on disk")


def _new_conflict_copy(target: Path, make: Callable[[Path], None]) -> Path:
    """A visible sibling the vault does not load as a note (it does not end in .md), made by
    `make`, which must fail with FileExistsError on a name already taken: a copy never replaces
    another. Its name is cut to fit beside a note of the longest name, so two long names that
    begin alike, or one note's two conflicts within a second, get `-2`, `-3`, ..."""
    stamp = time.strftime("%Y%m%d-%H%M%S")
    for number in range(1, 1000):
        tail = f".conflict-{stamp}" + (f"-{number}" if number > 1 else "")
        copy = target.with_name(fitted_name(target.name, tail))
        try:
            make(copy)
        except FileExistsError:
            continue
        return copy
    raise FileExistsError(errno.EEXIST, "no free name for a conflict copy", str(target))


def _keep_for_the_user(target: Path, carried: list[tuple[bytes, bytes]]) -> str:
    """Save edits that could not be merged next to the file, where the user will see them."""
    copy = _new_conflict_copy(target, lambda name: atomic_create_bytes(name, carried[-1][1]))
    return f"an edit saved meanwhile is kept in {copy.name}"


def read_settled(path: Path, settle_seconds: float = SETTLE_SECONDS) -> tuple[bytes, tuple]:
    """The file's bytes once nobody holds it open for writing (where the OS can tell).

    Returns the bytes and the file's identity (device, inode, size, times); FileBusy when a
    writer keeps it open longer than `settle_seconds`.
    """
    deadline = time.monotonic() + settle_seconds
    pause = 0.001
    while True:
        fd = os.open(path, os.O_RDONLY)
        try:
            leased = _take_read_lease(fd)
            if leased is None:
                if time.monotonic() > deadline:
                    raise FileBusy(f"another program keeps {path.name} open for writing")
                time.sleep(pause)
                pause = min(pause * 2, 0.02)
                continue
            data = _read_all(fd)
            identity = file_identity(os.fstat(fd))
            if leased and not _release_lease(fd):
                continue  # someone started opening it for writing while we read: read again
            return data, identity
        finally:
            os.close(fd)


def merge_lines(base: bytes, ours: bytes, theirs: bytes) -> bytes:
    """Three-way merge by lines: `ours` with the changes `theirs` made to `base`.

    Lines added by both at the same place are kept, ours first; any other overlap is a
    ReplaceConflict.
    """
    if theirs == base or theirs == ours:
        return ours
    if ours == base:
        return theirs
    if theirs.startswith(base) and not ours.endswith(theirs[len(base):]):
        return ours + theirs[len(base):]  # they appended: the common case, without a diff
    b, o, t = (text.splitlines(keepends=True) for text in (base, ours, theirs))
    o_ops, t_ops = _opcodes(b, o), _opcodes(b, t)
    hunks = sorted([(i1, i2, "o") for tag, i1, i2, _j1, _j2 in o_ops if tag != "equal"]
                   + [(i1, i2, "t") for tag, i1, i2, _j1, _j2 in t_ops if tag != "equal"])
    out: list[bytes] = []
    cursor = k = 0
    while k < len(hunks):
        start, end, sides = hunks[k][0], hunks[k][1], {hunks[k][2]}
        k += 1
        while k < len(hunks) and (hunks[k][0] < end or hunks[k][0] == start):
            end = max(end, hunks[k][1])
            sides.add(hunks[k][2])
            k += 1
        out += b[cursor:start]
        mine = o[_position(o_ops, start, False):_position(o_ops, end, True)]
        yours = t[_position(t_ops, start, False):_position(t_ops, end, True)]
        if sides == {"o"} or mine == yours:
            out += mine
        elif sides == {"t"}:
            out += yours
        elif start == end:
            out += mine + yours  # both inserted lines at the same place
        else:
            raise ReplaceConflict("an edit made meanwhile overlaps ours")
        cursor = end
    out += b[cursor:]
    return b"".join(out)


def _opcodes(a: list[bytes], b: list[bytes]) -> list[tuple]:
    import difflib

    return difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes()


def _position(ops: list[tuple], i: int, end: bool) -> int:
    """Where base line `i` falls in the other text: a change starting (or, with `end`, ending)
    at `i` counts in full; otherwise `i` lies in an unchanged stretch."""
    for tag, i1, i2, j1, j2 in ops:
        if tag != "equal" and (i2 if end else i1) == i:
            return j2 if end else j1
    for tag, i1, i2, j1, _j2 in ops:
        if tag == "equal" and i1 <= i <= i2:
            return j1 + (i - i1)
    return 0


def _write_temp(target: Path, data: bytes) -> Path:
    """A synced hidden sibling of `target` holding `data`, with the target's permissions."""
    temp = temp_path(target)
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        _write_all(fd, data)
        _carry_over(target, fd)
        os.fsync(fd)
    except BaseException:
        os.close(fd)
        _unlink_quietly(temp)
        raise
    os.close(fd)
    return temp


def file_identity(st: os.stat_result) -> tuple:
    """What changes whenever a file's content may have: device, inode, size, mtime, ctime."""
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def _read_all(fd: int) -> bytes:
    chunks: list[bytes] = []
    while True:
        chunk = os.read(fd, 1 << 20)
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)


def _unlink_quietly(path: Path) -> None:
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass


_swap = None


def _exchange(a: Path, b: Path) -> bool:
    """Atomically swap the files named `a` and `b`; False where the OS or file system cannot."""
    global _swap
    if _swap is None:
        _swap = _find_swap()
    if _swap is False:
        return False
    import ctypes

    if _swap(os.fsencode(a), os.fsencode(b)) == 0:
        return True
    err = ctypes.get_errno()
    if err in (errno.EINVAL, errno.ENOSYS, errno.ENOTSUP, errno.EOPNOTSUPP):
        return False  # e.g. a network or FUSE file system without exchange
    raise OSError(err, os.strerror(err), str(b))


def _find_swap():
    """The platform's atomic swap as `swap(a, b) -> 0 | -1`, or False."""
    import ctypes
    import sys

    try:
        libc = ctypes.CDLL(None, use_errno=True)
    except OSError:
        return False
    if sys.platform.startswith("linux") and hasattr(libc, "renameat2"):
        at_fdcwd = -100
        fn = libc.renameat2
        fn.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p,
                       ctypes.c_uint]
        return lambda a, b: fn(at_fdcwd, a, at_fdcwd, b, RENAME_EXCHANGE)
    if sys.platform == "darwin" and hasattr(libc, "renamex_np"):
        fn = libc.renamex_np
        fn.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_uint]
        return lambda a, b: fn(a, b, RENAME_EXCHANGE)
    return False


try:
    import fcntl as _fcntl
    import signal as _signal

    _F_SETLEASE: int | None = getattr(_fcntl, "F_SETLEASE", None)
    _F_GETLEASE: int = getattr(_fcntl, "F_GETLEASE", 0)
    _F_SETSIG: int | None = getattr(_fcntl, "F_SETSIG", None)
except ImportError:  # Windows
    _F_SETLEASE = None


def _take_read_lease(fd: int) -> bool | None:
    """Linux read lease: True when taken, None while a writer holds the file open, False
    where leases are unavailable (not Linux, not our file, a file system without them)."""
    if _F_SETLEASE is None or _F_SETSIG is None:
        return False
    try:
        # A broken lease is signalled; SIGIO would kill us, SIGURG is ignored by default.
        _fcntl.fcntl(fd, _F_SETSIG, _signal.SIGURG)
        _fcntl.fcntl(fd, _F_SETLEASE, _fcntl.F_RDLCK)
    except BlockingIOError:
        return None
    except OSError:
        return False
    return True


def _release_lease(fd: int) -> bool:
    """Drop the lease; False when a writer had started to open the file meanwhile."""
    assert _F_SETLEASE is not None  # only called after `_take_read_lease` took one
    intact = _fcntl.fcntl(fd, _F_GETLEASE) == _fcntl.F_RDLCK
    _fcntl.fcntl(fd, _F_SETLEASE, _fcntl.F_UNLCK)
    return intact
