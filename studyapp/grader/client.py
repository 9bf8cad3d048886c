"""`GraderClient`: how the CLI and the TUI grade a file without importing torch themselves.

It starts the worker (`python -m studyapp.grader.worker`) lazily, or early with `start()` so
torch imports while the caller does other work, sends one job at a time and always answers with
a verdict: a worker that dies or stops answering is killed, restarted on the next call, and the
submission gets an error verdict.

Jobs and verdicts travel over a unix socket pair, not pipes: a pipe can be reopened for writing
through /proc/<pid>/fd by any process of the same user, a socket cannot, so learner code has no
way to slip a forged verdict line to us, whatever the sandbox on this kernel.

Starting the worker makes this process (the app) not dumpable (`hide_our_proc_entries`): its
/proc/<pid>/environ, fds and memory become root's, so learner code running as the same user
cannot read the app's environment (its tokens) even where neither Landlock nor a PID namespace
hides the app's /proc entry from it. The worker and the learner get a scrubbed environment
(`environment`), and the worker makes itself undumpable too.
"""

from __future__ import annotations

import json
import os
import selectors
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import IO

from studyapp.grader.contract import ContractError, FailureOrigin, GradeLimits, Job, Verdict, verdict_from
from studyapp.grader.environment import worker_environment
from studyapp.grader.verdicts import error_verdict
from studyapp.textwidth import valid_text

STARTUP_ALLOWANCE = 120.0
"""Seconds on top of a job's timeout for importing torch, building cases and judging."""


class GraderClient:
    """One warm worker; `grade` is safe to call from a worker thread while `cancel` is called from another."""

    def __init__(self, limits: GradeLimits, env: dict[str, str] | None = None):
        self.limits = limits
        """What each submission may use, unless a `grade` call names others."""
        self.env = env
        self._proc: subprocess.Popen | None = None
        self._sock: socket.socket | None = None
        """Our end of the worker's stdin and stdout."""
        self._log: IO[bytes] | None = None
        self._buffer = b""
        self._next_id = 0
        self._lock = threading.Lock()
        self._cancelled = False

    def start(self) -> None:
        """Start the worker now if it is not running (it keeps importing torch in the background)."""
        if self._proc is not None and self._proc.poll() is None:
            return
        hide_our_proc_entries()
        self._log = tempfile.TemporaryFile()
        self._buffer = b""
        ours, theirs = socket.socketpair()
        try:
            self._proc = subprocess.Popen(
                [sys.executable, "-m", "studyapp.grader.worker"],
                stdin=theirs.fileno(), stdout=theirs.fileno(), stderr=self._log,
                env=worker_environment(self.env if self.env is not None else _env_with_our_package()),
            )
        except BaseException:
            ours.close()
            raise
        finally:
            theirs.close()
        self._sock = ours

    @classmethod
    def from_settings(cls, settings, env: dict[str, str] | None = None) -> GraderClient:
        """A client with the limits `config.toml` sets: how the CLI and the TUI build theirs."""
        return cls(GradeLimits.from_settings(settings), env=env)

    def warm(self, drill_id: str, reference: str | os.PathLike, device: str = "auto") -> None:
        """Grade the drill's own reference once and drop the verdict: a worker's first grade of
        a drill builds its cases and reference values (seconds), so doing it while the learner
        reads the statement makes their first run as quick as later ones. A learner's grade
        sent meanwhile waits for it (one job at a time), never longer than it would have."""
        self.grade(drill_id, reference, device=device)

    def grade(self, drill_id: str, path: str | os.PathLike, device: str = "auto",
              limits: GradeLimits | None = None, seed: int | None = None) -> Verdict:
        """Grade one file under `limits` (default: the client's); always returns a verdict."""
        limits = limits or self.limits
        with self._lock:
            self._cancelled = False
            started = time.monotonic()
            self.start()
            self._next_id += 1
            job = Job(id=self._next_id, drill=drill_id, file=str(Path(path).absolute()), device=device,
                      seed=seed, limits=limits.to_json())
            try:
                answer = self._exchange(job, deadline=started + limits.timeout + STARTUP_ALLOWANCE)
            except BaseException:  # Ctrl-C in the CLI: stop the child now so closing is quick and clean
                self.cancel()
                raise
            if isinstance(answer, ContractError):
                answer = error_verdict(drill_id, str(path), device, "the grader answered in a broken form",
                                       str(answer), origin=FailureOrigin.GRADER, seconds=time.monotonic() - started)
            elif answer is None:
                cancelled = self._cancelled
                answer = error_verdict(drill_id, str(path), device,
                                       "cancelled" if cancelled else "the grader stopped unexpectedly",
                                       self._log_tail(), seconds=time.monotonic() - started,
                                       origin=FailureOrigin.CANCELLED if cancelled else FailureOrigin.GRADER)
                self._kill()
            answer["file"] = str(path)
            return valid_text(answer)

    def cancel(self) -> None:
        """Stop the submission being graded now; its `grade` call returns a "cancelled" verdict."""
        self._cancelled = True
        proc = self._proc
        if proc is not None and proc.poll() is None:
            try:
                os.kill(proc.pid, signal.SIGUSR1)
            except ProcessLookupError:
                pass

    def close(self) -> None:
        """Stop the worker; a submission still running is cancelled first, so it cleans up after it."""
        if self._lock.locked():
            self.cancel()
        proc, self._proc = self._proc, None
        sock, self._sock = self._sock, None
        if proc is None:
            return
        assert sock is not None, "start() sets the socket with the process"
        try:
            sock.shutdown(socket.SHUT_RDWR)  # the worker reads EOF and leaves
            proc.wait(timeout=5)
        except (OSError, subprocess.TimeoutExpired):
            proc.kill()
            proc.wait()
        sock.close()

    def __enter__(self) -> GraderClient:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def _exchange(self, job: Job, deadline: float) -> Verdict | ContractError | None:
        """Send one job and wait for its answer; None when the worker died, hung or was closed."""
        sock = self._sock
        if sock is None:  # close() ran from another thread
            return None
        try:
            return self._send_and_wait(sock, job, deadline)
        except (OSError, ValueError, AttributeError):  # close() shut the socket from another thread
            return None

    def _send_and_wait(self, sock: socket.socket, job: Job, deadline: float) -> Verdict | ContractError | None:
        sock.sendall((json.dumps(job) + "\n").encode())
        with selectors.DefaultSelector() as selector:
            selector.register(sock, selectors.EVENT_READ)
            while True:
                while b"\n" in self._buffer:
                    line, self._buffer = self._buffer.split(b"\n", 1)
                    try:
                        message = json.loads(line)
                    except ValueError:
                        continue
                    if isinstance(message, dict) and message.get("id") == job["id"]:
                        try:
                            return verdict_from(message.get("verdict"))
                        except ContractError as exc:
                            return exc
                remaining = deadline - time.monotonic()
                if remaining <= 0 or not selector.select(remaining):
                    return None
                chunk = sock.recv(1 << 16)
                if not chunk:
                    return None
                self._buffer += chunk

    def _kill(self) -> None:
        proc, self._proc = self._proc, None
        sock, self._sock = self._sock, None
        if proc is not None:
            proc.kill()
            proc.wait()
        if sock is not None:
            sock.close()

    def _log_tail(self) -> str:
        if self._log is None:
            return ""
        self._log.seek(0, os.SEEK_END)
        size = self._log.tell()
        self._log.seek(max(0, size - 2000))
        return self._log.read().decode("utf-8", "replace")


PR_SET_DUMPABLE = 4


def hide_our_proc_entries() -> None:
    """prctl(PR_SET_DUMPABLE, 0) on this process (Linux; as `confine.make_undumpable` does for
    the worker, which this process may not import: `confine` reaches the worker, and torch): its /proc/<pid>/environ, fd, mem and
    the like become root's, readable only by root (and itself), so no other process of this user
    (the learner's code, where no Landlock or PID namespace hides us) reads our environment. It
    also turns off core dumps of the app, which writes its own crash log instead."""
    if not sys.platform.startswith("linux"):
        return
    import ctypes

    try:
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)
    except (OSError, AttributeError):
        pass  # no prctl here: the sandbox's walls are all there is


def _env_with_our_package() -> dict[str, str]:
    """The worker must import this very `studyapp`, even when it runs from a source checkout."""
    env = dict(os.environ)
    root = str(Path(__file__).resolve().parents[2])
    env["PYTHONPATH"] = os.pathsep.join(p for p in (root, env.get("PYTHONPATH")) if p)
    return env
