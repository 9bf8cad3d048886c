"""Finding a vault's notes: every `*.md` file with its size and mtime, and the files that cannot
be notes (odd names, read-only, too large, unreadable).

Apart from `vault` so that a read-only command can start the scan in a forked child
(`start_scan_ahead`) before it imports the rest of the vault code: on 10,000 notes the scan is
about 50 ms of `stat` calls, which then run on the other core while the command imports its
modules and reads the metadata cache (benchmarks/vault_scale.py, issue 15). The terminal app's
first start (no metadata cache yet) has the child parse the notes too (`parse=True`), on every
core, while Textual starts.

~440 lines on purpose: which paths are notes (`not_a_note_reason`, the odd names, the files a
load skips) is decided once, here, for the scan and for every command that names a note.
"""

from __future__ import annotations

import marshal
import os
import re
import signal
import stat
import sys
import time
from typing import NamedTuple

from studyapp.atomic import TEMP_SUFFIX
from studyapp.vault.bounds import MAX_NOTE_BYTES

NOTE_SUFFIX = ".md"
STALE_TEMP_SECONDS = 3600
"""A write's temp file older than this was left by a writer that died (a write takes
milliseconds); it holds a copy of a note's old or new bytes, never the only copy."""
ANY_WRITE_BIT = stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH
ANY_READ_BIT = stat.S_IRUSR | stat.S_IRGRP | stat.S_IROTH
_ODD_NAME = re.compile("[\x00-\x1f\x7f-\x9f\ud800-\udfff]")
"""Control characters, and the lone surrogates that stand for bytes that are not UTF-8."""


FoundFile = tuple[str, str, int, int, int]
"""A note file: (path, abs_path, size, mtime_ns, ctime_ns), the path posix and relative to the
vault. A plain tuple, unpacked where it is used: 10,000 of them are built on every load. The
ctime is what tells an edit that kept the size and put the mtime back (`touch -r`, `rsync -t`):
no program can set it."""


Problem = tuple[str, str]
"""(path, reason): a file or folder the scan skipped, and why."""

_SCAN_BY_FD = os.scandir in os.supports_fd and hasattr(os, "O_DIRECTORY")


def usable_cores() -> int:
    """The cores this process may run on (its affinity, where the system tells)."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def scan_folder(root: str) -> tuple[list[FoundFile], list[Problem]]:
    """Every visible `*.md` file under `root` (symlinks followed, directory loops cut), sorted
    by path, and the problems met on the way. `root` is a folder (the caller checked)."""
    files: list[FoundFile] = []
    problems: list[Problem] = []
    seen_dirs: dict[tuple[int, int], str] = {}
    """(device, inode) of each folder scanned -> the prefix it was scanned under."""
    linked: list[FoundFile] = []
    stack = [(root, "", False)]
    while stack:
        folder, prefix, through_link = stack.pop()
        fd = None
        try:  # closed on every way out, and only then: the entries' `stat` calls use it
            try:
                # Listed through a descriptor: each `stat` below is then relative to the folder
                # (fstatat), not a walk of the whole path again (listing and stat-ing 10,000
                # notes took 13 % less time so).
                if _SCAN_BY_FD:
                    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
                st = os.stat(folder) if fd is None else os.fstat(fd)
                key = (st.st_dev, st.st_ino)
                if key in seen_dirs:  # a directory symlink loop, or the same folder linked twice
                    first = seen_dirs[key].rstrip("/")
                    problems.append((prefix.rstrip("/"), "the same folder as " + (first or "the vault itself")
                                     + " (through a symbolic link): its notes are studied there"))
                    continue
                seen_dirs[key] = prefix
                entries = list(os.scandir(folder if fd is None else fd))
            except OSError as exc:
                problems.append((prefix.rstrip("/") or ".", f"cannot read folder: {exc.strerror}"))
                continue
            _scan_entries(folder, prefix, entries, files, problems, stack, through_link, linked)
        finally:
            if fd is not None:
                os.close(fd)
    if linked:
        files = _one_path_per_file(root, files, problems, linked)
    files.sort()  # by path: paths are unique, so the tuples' other fields never decide
    return files, problems


def _one_path_per_file(root: str, files: list[FoundFile], problems: list[Problem],
                       linked: list[FoundFile]) -> list[FoundFile]:
    """Each file reached by several paths (symbolic links to it or to a folder holding it) kept
    under one: its own path in the vault when the scan found it there, else the first of its
    paths through links. Two paths were two cards sharing one file, and every replay of the
    history rewrote it to one card or the other. Only paths through a link are looked at: a
    vault without links pays nothing here."""
    found = {f[0] for f in files}
    real_root = os.path.realpath(root) + os.sep
    dropped: dict[str, str] = {}
    by_file: dict[tuple[int, int], str] = {}
    for path, absolute, *_ in sorted(linked):
        real = os.path.realpath(absolute)
        own = real[len(real_root):].replace(os.sep, "/") if real.startswith(real_root) else None
        if own is not None and own != path and own in found:
            dropped[path] = own
            continue
        try:
            st = os.stat(absolute)
        except OSError:
            continue
        first = by_file.setdefault((st.st_dev, st.st_ino), path)
        if first != path:
            dropped[path] = first
    for path, keep in sorted(dropped.items()):
        problems.append((path, f"the same file as {keep} (through a symbolic link): studied as {keep}"))
    return [f for f in files if f[0] not in dropped]


def _scan_entries(folder: str, prefix: str, entries: list[os.DirEntry], files: list[FoundFile],
                  problems: list[Problem], stack: list[tuple[str, str, bool]], through_link: bool,
                  linked: list[FoundFile]) -> None:
    """One folder's entries: its notes into `files`, its subfolders onto `stack`; a note whose
    path goes through a symbolic link also into `linked` (`_one_path_per_file`)."""
    base = folder if folder.endswith("/") else folder + "/"
    for entry in entries:
        name = entry.name
        if name[0] == ".":  # hidden: .obsidian/, .git/, editors' temp files
            if name.endswith(TEMP_SUFFIX):
                _remove_if_stale(entry, base + name)
            continue
        rel = prefix + name
        try:
            if entry.is_dir():
                odd = odd_name_reason(name, "folder")
                if odd:
                    problems.append((shown_path(rel), odd))
                    continue
                if through_link or entry.is_symlink():  # after every real folder: the same
                    stack.insert(0, (base + name, rel + "/", True))  # folder is then its own path
                else:
                    stack.append((base + name, rel + "/", False))
                continue
            if not name.endswith(NOTE_SUFFIX):
                continue
            odd = odd_name_reason(name)
            if odd:
                if entry.is_file():
                    problems.append((shown_path(rel), odd))
                continue
            st = entry.stat()
        except FileNotFoundError:
            if entry.is_symlink():
                problems.append((rel, "broken symbolic link"))
            continue
        except OSError as exc:
            problems.append((rel, f"cannot read: {exc.strerror}"))
            continue
        if not entry.is_file():  # a pipe, device or socket named like a note: never opened
            problems.append((rel, "not a regular file (a pipe, device or socket): a note must be a file"))
            continue
        problem = file_problem(st.st_mode, st.st_size) or links_problem(st.st_nlink)
        if problem:
            problems.append((rel, problem))
            continue
        files.append((rel, base + name, st.st_size, st.st_mtime_ns, st.st_ctime_ns))
        if through_link or entry.is_symlink():
            linked.append(files[-1])


def shown_path(path: str) -> str:
    """A path as one printable line: bytes that are not UTF-8 as \\xNN, control characters escaped."""
    raw = path.encode("utf-8", "surrogateescape")
    text = raw.decode("utf-8", "backslashreplace")
    return "".join(ch if ch.isprintable() or ch == " " else ascii(ch)[1:-1] for ch in text)


def odd_name_reason(name: str, kind: str = "file") -> str | None:
    """Why a file or folder name cannot be a note's path (not UTF-8, control characters), or None."""
    if name.isprintable() or not _ODD_NAME.search(name):
        return None
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return f"{kind} name is not valid UTF-8: rename it (its notes are skipped until then)"
    return f"{kind} name holds control characters: rename it (its notes are skipped until then)"


def not_a_note_reason(path: str) -> str | None:
    """Why a vault-relative path names no note the scan would list (so nothing may write it:
    not a `.md` file, hidden or under a hidden folder such as .studyapp or .trash, an odd
    name), or None."""
    parts = path.split("/")
    if not parts[-1].endswith(NOTE_SUFFIX):
        return f"not a note: notes are {NOTE_SUFFIX} files"
    for index, part in enumerate(parts):
        if part.startswith("."):
            return "not a note: hidden files and folders (.studyapp, .obsidian, .trash) are not read"
        odd = odd_name_reason(part, "file" if index == len(parts) - 1 else "folder")
        if odd:
            return odd
    return None


def links_problem(links: int) -> str | None:
    """Why a file with other hard links is skipped: a review writes a new file in its place,
    which would split this name from the others (an edit under one would no longer show
    under the other)."""
    if links > 1:
        return (f"has {links} hard links (names of one file): a review would split them; "
                "keep one name (or a symbolic link) to review it")
    return None


def file_problem(mode: int, size: int) -> str | None:
    """Why a note file is skipped before it is read, or None."""
    if not mode & ANY_READ_BIT:  # not "read-only": making it writable would not be the fix
        return ("unreadable (no read permission for anyone): make it readable and writable "
                "(chmod 644) to review it")
    if not mode & ANY_WRITE_BIT:
        return ("read-only (no write permission): studyapp never rewrites it; "
                "make it writable to review it")
    return size_problem(size)


def size_problem(size: int) -> str | None:
    """Why a note of `size` bytes is skipped for its size, or None."""
    if size > MAX_NOTE_BYTES:
        return f"{size:,} bytes is too large for a note (at most {MAX_NOTE_BYTES:,} are read)"
    return None


def _remove_if_stale(entry: os.DirEntry, path: str) -> None:
    """Sweep a temp file a killed writer left behind (at `path`), once it is clearly abandoned."""
    try:
        if time.time() - entry.stat(follow_symlinks=False).st_mtime > STALE_TEMP_SECONDS:
            os.unlink(path)
    except OSError:
        pass  # gone already, or not ours to remove: harmless either way


# -- the scan in a child, ahead of the load ---------------------------------------------------

SCAN_AHEAD_MIN_CACHE_BYTES = 1 << 20
"""Scan ahead only for a vault whose metadata cache is at least this large (about 900 notes):
the scan costs ~5 µs a note, a fork and the hand-over of its result about 2 ms."""


class _ScanAhead(NamedTuple):
    root: str
    pid: int
    fd: int
    parses: bool


_pending: _ScanAhead | None = None


def start_scan_ahead(root: str | os.PathLike, cache_file: str | os.PathLike, parse: bool = False) -> bool:
    """Start scanning `root` in a forked child, for `Vault.scan` to pick up (`take_scan_ahead`).

    For a read-only command that loads the whole vault next (nothing may change the vault
    between the two). Only where it pays and is safe: the cache of a large vault, or none yet,
    a second core, and no other thread in this process (forking one can deadlock). False: not
    started. With `parse`, a big vault's files are parsed too, as the load's workers parse them
    (`take_parsed_ahead`): for the app's start without a cache, whose load would otherwise run
    in a thread, after Textual started.
    """
    global _pending
    root = os.fspath(root)
    if _pending is not None or not hasattr(os, "fork") or not os.path.isdir(root):
        return False
    threading = sys.modules.get("threading")
    if threading is not None and threading.active_count() > 1:
        return False
    if usable_cores() < 2:
        return False
    try:
        if os.stat(cache_file).st_size < SCAN_AHEAD_MIN_CACHE_BYTES:
            return False  # a small vault: its scan takes less than the fork
    except FileNotFoundError:
        pass  # no cache yet (a first run): a vault of any size, read whole; the scan overlaps the start
    except OSError:
        return False
    try:
        read_fd, write_fd = os.pipe()
    except OSError:  # out of descriptors: the command scans itself
        return False
    # Ctrl-C waits until the child is inside its `try` (which always ends in `_exit`): a child
    # interrupted before it would go on as a second copy of the command.
    signal.pthread_sigmask(signal.SIG_BLOCK, _DEFERRED)
    parent = os.getpid()
    try:
        pid = os.fork()
    except OSError:
        signal.pthread_sigmask(signal.SIG_UNBLOCK, _DEFERRED)
        os.close(read_fd)
        os.close(write_fd)
        return False
    if pid == 0:  # the child: scan, hand the result over, and leave without any clean-up
        status = 1
        try:
            from studyapp.vault.parallel import die_with_parent

            die_with_parent(parent)  # a command killed by a signal leaves no scan running
            if parse:  # a group of its own: one kill stops it and the workers it forks
                os.setpgid(0, 0)
            signal.pthread_sigmask(signal.SIG_UNBLOCK, _DEFERRED)
            os.close(read_fd)
            scanned = scan_folder(root)
            _send(write_fd, scanned, _parsed_rows(scanned[0]) if parse else None)
            status = 0
        finally:
            os._exit(status)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, _DEFERRED)
    if parse:
        try:
            os.setpgid(pid, pid)  # as the child does: whichever runs first
        except OSError:
            pass
    os.close(write_fd)
    _pending = _ScanAhead(root, pid, read_fd, parse)
    return True


_DEFERRED = {signal.SIGINT, signal.SIGTERM}


def take_scan_ahead(root: str | os.PathLike) -> tuple[list[FoundFile], list[Problem]] | None:
    """The result of the scan started ahead for `root` (once), or None: none was started for
    it, or it failed (the caller scans itself)."""
    global _pending
    pending, _pending = _pending, None
    if pending is None:
        return None
    if pending.root != os.fspath(root):
        _discard(pending)
        return None
    try:
        data = _receive(pending.fd)
    finally:
        os.close(pending.fd)
        status = _reap(pending.pid)
    if status not in (0, None):
        return None
    try:
        paths, sizes, mtimes, ctimes, problems, rows = marshal.loads(data)
    except (ValueError, EOFError, TypeError):
        return None
    if rows:
        _parsed[pending.root] = {row[0]: row for row in rows}
    prefix = pending.root if pending.root.endswith("/") else pending.root + "/"
    return list(zip(paths, [prefix + path for path in paths], sizes, mtimes, ctimes)), problems


_parsed: dict[str, dict[str, tuple]] = {}
"""Metadata-cache rows the scan ahead parsed, by vault root, until the load takes them."""


def take_parsed_ahead(root: str | os.PathLike) -> dict[str, tuple]:
    """The rows (by path) of the files the scan ahead of `root` parsed (once), else {}: each
    for the size and times the scan saw, which the load checks as it checks the cache's."""
    return _parsed.pop(os.fspath(root), {})


def _parsed_rows(files: list[FoundFile]) -> list[tuple] | None:
    """In the child: the files' cache rows when they are many, parsed as a cold load's
    workers parse them (this child has no other thread, so it may fork them), or by itself."""
    from studyapp.vault import parallel

    if len(files) < parallel.MIN_FILES:
        return None
    # every core, free or not: the app's start is short
    return parallel.in_workers("rows", files, usable_cores()) or parallel.rows_of(files)


def forget_scan_ahead() -> None:
    """A command that started a scan ahead and did not use it: stop and reap the child."""
    global _pending
    pending, _pending = _pending, None
    _parsed.clear()
    if pending is not None:
        _discard(pending)


def _discard(pending: _ScanAhead) -> None:
    os.close(pending.fd)  # a child still scanning fails to write its result, and leaves
    if signal.getsignal(signal.SIGCHLD) is signal.SIG_IGN:
        return  # the system reaps it, and its pid may already be another process's: no signal
    # It only lists and reads (and may unlink a dead writer's temp file): nothing to finish.
    if pending.parses:  # with the workers it forked: its group (unreaped, so still its id)
        try:
            os.killpg(pending.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    try:
        os.kill(pending.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    _reap(pending.pid)


def _reap(pid: int) -> int | None:
    """Wait for the child; its wait status, or None when the system reaped it already (the
    process ignores SIGCHLD, as some shells and daemons leave it): then the data it sent decides
    (a child that died mid-way sent a truncated result, which does not unmarshal)."""
    try:
        return os.waitpid(pid, 0)[1]
    except ChildProcessError:
        return None


def _send(fd: int, scanned: tuple[list[FoundFile], list[Problem]], rows: list[tuple] | None) -> None:
    """The scan as columns (paths, sizes, mtimes, ctimes, problems), and the parsed rows if any: the
    absolute paths are the root's plus the relative ones, so the parent rebuilds them."""
    files, problems = scanned
    import fcntl

    if hasattr(fcntl, "F_SETPIPE_SZ"):  # Linux: room for the whole result, so the child can
        try:  # finish before the parent reads
            fcntl.fcntl(fd, fcntl.F_SETPIPE_SZ, 1 << 20)
        except OSError:
            pass
    view = memoryview(marshal.dumps(([f[0] for f in files], [f[2] for f in files],
                                     [f[3] for f in files], [f[4] for f in files], problems, rows)))
    while view:
        view = view[os.write(fd, view):]


def _receive(fd: int) -> bytes:
    chunks = []
    while chunk := os.read(fd, 1 << 20):
        chunks.append(chunk)
    return b"".join(chunks)
