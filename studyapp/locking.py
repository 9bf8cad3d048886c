"""One writer at a time across processes, and who owns a write still in flight.

The TUI and the CLI (or two terminals) may record reviews of the same vault at once. Every
review transaction (note file + database) runs while holding an exclusive lock on a file in the
data dir, so the second writer waits and then starts from what the first one wrote. Journal
rows carry their writer's `ProcessIdentity`, so a process opening the database repairs only
rows whose writer is gone.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from studyapp.errors import UserError

WAIT_SECONDS = 20.0
"""How long a writer waits for another one to finish before giving up with a message: longer
than the worst case of one transaction (an undo may retry a note that keeps changing twice,
`atomic.PATIENCE_SECONDS` each)."""


class WriterBusy(UserError):
    """Another process kept the vault's write lock longer than a writer waits."""


@dataclass(frozen=True)
class ProcessIdentity:
    """A process as the journal names it: its pid and, where the OS tells, when it started.

    The start time tells a live owner from a later process that was given the same pid.
    """

    pid: int
    started: str | None
    """`<boot id>/<start ticks>` on Linux; None where the start time cannot be read."""

    def as_text(self) -> str:
        return f"{self.pid}" if self.started is None else f"{self.pid}@{self.started}"

    @classmethod
    def parse(cls, text: str) -> ProcessIdentity:
        pid, _, started = text.partition("@")
        return cls(int(pid), started or None)

    @classmethod
    def of(cls, pid: int) -> ProcessIdentity | None:
        """The identity of the running process `pid`; None when there is none."""
        if not _pid_exists(pid):
            return None
        return cls(pid, _start_of(pid))

    def is_alive(self) -> bool:
        """Whether this very process still runs (not merely some process with its pid)."""
        if not _pid_exists(self.pid):
            return False
        if self.started is None:
            return True
        now = _start_of(self.pid)
        return now is None or now == self.started


_current: ProcessIdentity | None = None


def current_process() -> ProcessIdentity:
    """This process's identity (recomputed after a fork)."""
    global _current
    if _current is None or _current.pid != os.getpid():
        _current = ProcessIdentity(os.getpid(), _start_of(os.getpid()))
    return _current


def _pid_exists(pid: int) -> bool:
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # alive, owned by someone else
    except OSError:
        return False
    return True


def _start_of(pid: int) -> str | None:
    """Linux: boot id and start time in clock ticks (field 22 of /proc/PID/stat)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            stat = fh.read()
        with open("/proc/sys/kernel/random/boot_id", "rb") as fh:
            boot = fh.read().strip().decode()
    except OSError:
        return None
    fields = stat[stat.rfind(b")") + 2:].split()  # the command name may hold spaces
    ticks = fields[19].decode() if len(fields) > 19 else ""
    if not ticks.isdigit():
        return None
    return f"{boot}/{ticks}"


class _ProcessLock:
    """The lock file as held by this process: threads take turns, re-entry nests."""

    def __init__(self, lock_file: Path):
        self.lock_file = lock_file
        self.threads = threading.RLock()
        self.depth = 0
        self.fd: int | None = None

    def acquire(self, wait: float) -> bool:
        deadline = time.monotonic() + wait
        got = self.threads.acquire(timeout=wait) if wait > 0 else self.threads.acquire(False)
        if not got:
            return False
        try:
            if self.depth == 0 and not self._lock_file(deadline):
                self.threads.release()
                return False
            self.depth += 1
            return True
        except BaseException:
            self.threads.release()
            raise

    def release(self) -> None:
        self.depth -= 1
        if self.depth == 0 and self.fd is not None:
            _unlock(self.fd)
            os.close(self.fd)
            self.fd = None
        self.threads.release()

    def _lock_file(self, deadline: float) -> bool:
        self.lock_file.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.lock_file, os.O_RDWR | os.O_CREAT, 0o644)
        pause = 0.002
        while not _try_lock(fd):
            if time.monotonic() >= deadline:
                os.close(fd)
                return False
            time.sleep(pause)
            pause = min(pause * 2, 0.05)
        self.fd = fd
        try:  # who holds it, for the message a waiting writer shows
            os.ftruncate(fd, 0)
            os.pwrite(fd, current_process().as_text().encode(), 0)
        except OSError:
            pass
        return True


if sys.platform == "win32":
    import msvcrt

    def _try_lock(fd: int) -> bool:
        try:
            os.lseek(fd, 0, os.SEEK_SET)
            msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)
        except OSError:
            return False
        return True

    def _unlock(fd: int) -> None:
        os.lseek(fd, 0, os.SEEK_SET)
        msvcrt.locking(fd, msvcrt.LK_UNLCK, 1)

else:
    import fcntl

    def _try_lock(fd: int) -> bool:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        return True

    def _unlock(fd: int) -> None:
        fcntl.flock(fd, fcntl.LOCK_UN)


_locks: dict[str, _ProcessLock] = {}
_locks_guard = threading.Lock()


class WriterLock:
    """The vault's write lock (`<data dir>/writer.lock`): one review transaction at a time."""

    def __init__(self, lock_file: Path, wait_seconds: float = WAIT_SECONDS):
        key = os.path.abspath(lock_file)
        with _locks_guard:
            self._lock = _locks.setdefault(key, _ProcessLock(Path(key)))
        self.wait_seconds = wait_seconds
        self.on_acquire: Callable[[], None] | None = None
        """Run each time the lock is taken: what another writer changed while this one waited
        (the log's place: `ReviewService`) is read again before anything is written."""

    @contextmanager
    def hold(self) -> Iterator[None]:
        """Hold the lock, waiting up to `wait_seconds`; WriterBusy when it stays taken."""
        try:
            acquired = self._lock.acquire(self.wait_seconds)
        except OSError as exc:  # e.g. a read-only data dir
            raise UserError(f"cannot take the write lock {self._lock.lock_file}: "
                            f"{exc.strerror}") from None
        if not acquired:
            raise WriterBusy(f"another studyapp process ({self._holder()}) is still writing to "
                             f"this vault after {self.wait_seconds:.0f} s; try again")
        try:
            if self.on_acquire is not None:
                self.on_acquire()
            yield
        finally:
            self._lock.release()

    @contextmanager
    def attempt(self) -> Iterator[bool]:
        """Hold the lock if it is free right now; yields whether it is held."""
        try:
            held = self._lock.acquire(0)
        except OSError:
            held = False
        try:
            if held and self.on_acquire is not None:
                self.on_acquire()
            yield held
        finally:
            if held:
                self._lock.release()

    def _holder(self) -> str:
        try:
            text = self._lock.lock_file.read_text().strip()
            return f"pid {ProcessIdentity.parse(text).pid}"
        except (OSError, ValueError):
            return "pid unknown"
