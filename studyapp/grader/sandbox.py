"""Run one submission in a child process under limits and collect what it sent back.

On CPU the child is forked from the warm worker (torch is already imported, so a run costs
milliseconds). For CUDA, where forking after CUDA initialisation is unsafe, the child is a fresh
interpreter (`python -m studyapp.grader.spawned`). Either way the child is confined (`confine`)
before learner code runs, the parent owns the wall clock, reads exactly one sealed frame
(`channel`) and kills the child's whole tree afterwards.
"""

from __future__ import annotations

import io
import os
import select
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass

from studyapp.grader.channel import NONCE_BYTES, READY, Tampered, new_nonce, open_frame
from studyapp.grader.confine import Confinement, Protection
from studyapp.grader.contract import ChildExit
from studyapp.grader.limits import Limits, apply_child_limits
from studyapp.grader.processes import kill_descendants

STARTUP_LIMIT = 120.0
"""Seconds a spawned child may take to import torch and initialise CUDA before it is ready."""
SCRATCH_EVERY = 0.1
"""Seconds between two measures of a scratch folder that no quota bounds."""
MAX_RESULT_BYTES = 512 << 20
"""A child that sends more than this is stopped: the parent must not be the one to run out of memory."""


@dataclass
class ChildRun:
    """What the parent knows after a child is gone."""

    outcome: bytes | None = None
    """The serialized outcome, when the child sent one completely."""
    tampered: Tampered | None = None
    """The result pipe held bytes the harness did not write."""
    exit_code: int | None = None
    """Exit status; negative for a signal (as in `subprocess`)."""
    learner_started: bool = False
    """It sent READY: learner code ran, so its exit status may be anything."""
    timed_out: bool = False
    cancelled: bool = False
    too_much_data: bool = False
    too_much_disk: bool = False
    """Its scratch folder grew past the limits (measured here when there is no scratch quota)."""
    output: bytes = b""
    """What it printed (stdout and stderr), up to the cap."""
    leftovers: bool = False
    """Some of its processes could not be killed."""
    seconds: float = 0.0


def _child_setup(capture_fd: int, keep_fds: tuple[int, ...], limits: Limits, workdir: str,
                 confinement: Confinement, limit_memory: bool) -> None:
    """Point stdio away from the worker's protocol, close everything else, apply the limits and
    enter the namespaces (from here on this is the learner's process, L)."""
    for sig in (signal.SIGUSR1, signal.SIGINT, signal.SIGTERM, signal.SIGPIPE):
        signal.signal(sig, signal.SIG_DFL)
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.dup2(capture_fd, 1)
    os.dup2(capture_fd, 2)
    low = 3
    for fd in sorted(keep_fds):
        os.closerange(low, fd)
        low = fd + 1
    os.closerange(low, 65536)
    apply_child_limits(limits, workdir, confinement, limit_memory=limit_memory)


def read_nonce(fd: int) -> bytes:
    """The run's nonce, from the pipe the parent writes it to after forking; the pipe is closed after."""
    nonce = b""
    while len(nonce) < NONCE_BYTES:
        chunk = os.read(fd, NONCE_BYTES - len(nonce))
        if not chunk:
            break
        nonce += chunk
    os.close(fd)
    return nonce


def run_forked(child_main: Callable[[int, bytes], None], limits: Limits, cancelled: Callable[[], bool],
               confinement: Confinement, spare: frozenset[int] = frozenset(),
               prepare: Callable[[], None] | None = None) -> ChildRun:
    """Fork; in the child set limits, confine, call `prepare()` (the last step before learner
    code: a failure there is a setup failure, the grader's), then `child_main(result_fd, nonce)`
    (never returns). OSError (ENOSPC...) when the scratch folder or the capture file cannot be made."""
    from studyapp.grader.confine import restrict

    workdir = tempfile.mkdtemp(prefix="studyapp-grade-")
    try:
        capture = tempfile.TemporaryFile()
    except OSError:
        _remove_tree(workdir)
        raise
    read_fd, write_fd = os.pipe()
    nonce_read, nonce_write = os.pipe()
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:  # the child: never returns
        try:
            os.close(read_fd)
            os.close(nonce_write)
            _child_setup(capture.fileno(), (write_fd, nonce_read), limits, workdir, confinement, limit_memory=True)
            restrict(confinement, workdir)
            if prepare is not None:
                prepare()
            nonce = read_nonce(nonce_read)
            os.write(write_fd, READY)
            child_main(write_fd, nonce)
        except BaseException:  # noqa: BLE001 - the sandbox could not be set up: say why in the output
            import traceback

            traceback.print_exc()
        finally:
            os._exit(ChildExit.SETUP_FAILED)
    os.close(write_fd)
    os.close(nonce_read)
    nonce = new_nonce()
    try:
        os.write(nonce_write, nonce)
    except OSError:
        pass  # it died already; _collect reports how
    os.close(nonce_write)
    try:
        return _collect(pid, read_fd, capture, limits, cancelled, spare, nonce, _watched(workdir, confinement))
    finally:
        _remove_tree(workdir)


def run_spawned(job: bytes, limits: Limits, cancelled: Callable[[], bool], confinement: Confinement,
                spare: frozenset[int] = frozenset()) -> ChildRun:
    """Start a fresh interpreter (CUDA-safe); it reads the nonce and `job` from stdin, then
    stdin is /dev/null."""
    import dataclasses
    import json

    workdir = tempfile.mkdtemp(prefix="studyapp-grade-")
    try:
        capture = tempfile.TemporaryFile()
    except OSError:
        _remove_tree(workdir)
        raise
    read_fd, write_fd = os.pipe()
    nonce = new_nonce()
    env = dict(os.environ, STUDYAPP_GRADER_WORKDIR=workdir, STUDYAPP_GRADER_RESULT_FD=str(write_fd),
               STUDYAPP_GRADER_LIMITS=json.dumps(dataclasses.asdict(limits)),
               STUDYAPP_GRADER_CONFINEMENT=json.dumps(confinement.to_dict()))
    proc = subprocess.Popen(
        [sys.executable, "-m", "studyapp.grader.spawned"], stdin=subprocess.PIPE,
        stdout=capture, stderr=capture, pass_fds=(write_fd,), env=env, cwd=workdir,
    )
    os.close(write_fd)
    assert proc.stdin is not None  # stdin=PIPE
    try:
        try:
            proc.stdin.write(nonce + job)
            proc.stdin.close()
        except OSError:
            pass  # it died early; _collect reports how
        return _collect(proc.pid, read_fd, capture, limits, cancelled, spare, nonce,
                        _watched(workdir, confinement), popen=proc)
    finally:
        _remove_tree(workdir)


def _watched(workdir: str, confinement: Confinement) -> str | None:
    """The scratch folder to measure while the child runs: only when no tmpfs quota bounds it."""
    return None if confinement.has(Protection.SCRATCH_QUOTA) else workdir


def _collect(pid: int, read_fd: int, capture, limits: Limits, cancelled: Callable[[], bool],
             spare: frozenset[int], nonce: bytes, scratch: str | None,
             popen: subprocess.Popen | None = None) -> ChildRun:
    run = ChildRun()
    measured = 0.0
    pidfd = _open_pidfd(pid)
    poller = select.poll()
    poller.register(read_fd, select.POLLIN)
    if pidfd is not None:
        poller.register(pidfd, select.POLLIN)
    data = bytearray()
    started = time.monotonic()
    deadline = started + STARTUP_LIMIT
    ready = exited = eof = False
    while not (exited and eof):
        if cancelled():
            run.cancelled = True
            break
        now = time.monotonic()
        if now >= deadline:
            run.timed_out = True
            break
        events = poller.poll(min(deadline - now, 0.1 if pidfd is not None else 0.02) * 1000)
        if not exited and (any(fd == pidfd for fd, _ in events) or (pidfd is None and _has_exited(pid))):
            exited = True
            if pidfd is not None:
                poller.unregister(pidfd)
            os.set_blocking(read_fd, False)  # what it wrote is in the pipe; its heirs may hold it open
        while not eof and (exited or any(fd == read_fd for fd, _ in events)):
            try:
                chunk = os.read(read_fd, 1 << 20)
            except BlockingIOError:
                chunk = None
            if chunk:
                data += chunk
                if not ready and data[:1] == READY:
                    ready = True
                    started = time.monotonic()
                    deadline = started + limits.timeout
            if chunk == b"" or (chunk is None and exited):
                eof = True  # drained; whatever still holds the pipe is killed below
                poller.unregister(read_fd)
            if not exited:
                break  # one read per readiness event while it runs
        if len(data) > MAX_RESULT_BYTES:
            run.too_much_data = True
            break
        if scratch is not None and time.monotonic() - measured >= SCRATCH_EVERY:
            measured = time.monotonic()
            if scratch_overflows(scratch, limits):
                run.too_much_disk = True
                break
    run.seconds = time.monotonic() - started
    run.learner_started = ready
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    _, status = os.waitpid(pid, 0)
    if popen is not None:
        popen.returncode = os.waitstatus_to_exitcode(status)
    run.exit_code = os.waitstatus_to_exitcode(status)
    run.leftovers = not kill_descendants(spare)
    if scratch is not None and not run.too_much_disk and scratch_overflows(scratch, limits):
        run.too_much_disk = True  # written between two measures, just before it ended
    if pidfd is not None:
        os.close(pidfd)
    os.close(read_fd)
    if ready and not (run.timed_out or run.cancelled or run.too_much_data):
        frame = open_frame(bytes(data[1:]), nonce)
        if isinstance(frame, Tampered):
            run.tampered = frame
        else:
            run.outcome = frame
    capture.seek(0)
    run.output = capture.read(limits.output_cap)
    capture.close()
    return run


def scratch_overflows(path: str, limits: Limits) -> bool:
    """Whether the folder holds more bytes (allocated, so sparse files count as they cost) or
    entries than `limits` allow; the walk stops as soon as it knows."""
    used = entries = 0
    folders = [path]
    while folders:
        folder = folders.pop()
        try:
            listing = os.scandir(folder)
        except PermissionError:  # its own code made it unreadable: ours again (same user), then read it
            try:
                os.chmod(folder, 0o700)
                listing = os.scandir(folder)
            except OSError:
                continue
        except OSError:
            continue
        with listing:
            for entry in listing:
                entries += 1
                try:
                    used += entry.stat(follow_symlinks=False).st_blocks * 512
                    if entry.is_dir(follow_symlinks=False):
                        folders.append(entry.path)
                except OSError:
                    pass
                if used > limits.scratch_bytes or entries > limits.scratch_files:
                    return True
    return False


def _open_pidfd(pid: int) -> int | None:
    """A descriptor that polls readable when `pid` exits (Linux >= 5.3); None means poll its state."""
    try:
        return os.pidfd_open(pid)
    except (AttributeError, OSError):
        return None


def _has_exited(pid: int) -> bool:
    """Whether the child has exited, leaving it to be reaped (and its status read) later."""
    return os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None


MAX_PICKLE_BYTES = 1 << 20
"""The outcome's pickle (its data.pkl; the tensors' bytes are other members): the largest a
reference solution's outcome makes is ~110 KB (cross_attention). A frame forged by learner code
that dug the channel's nonce out of the harness held 4 MB of empty lists, which the load built
whole (150 MB) before the checks found it was no outcome: at the result cap, ~19 GiB."""
MAX_MEMBERS = 20_000
"""Members of the outcome's archive (one per tensor storage; ~660 at most from a reference)."""


def load_outcome(raw: bytes) -> dict:
    """Load a child's outcome, allowing plain data and tensors only (never code), once its
    archive is what `torch.save` writes and small where it is read into objects."""
    import zipfile

    import torch

    with zipfile.ZipFile(io.BytesIO(raw)) as archive:
        members = archive.infolist()
        if len(members) > MAX_MEMBERS:
            raise ValueError(f"an outcome of {len(members):,} parts")
        if any(member.compress_type != zipfile.ZIP_STORED for member in members):
            raise ValueError("a compressed outcome (torch.save stores its parts as they are)")
        pickles = [member for member in members if member.filename.endswith("/data.pkl")]
        if len(pickles) != 1 or pickles[0].file_size > MAX_PICKLE_BYTES:
            raise ValueError("an outcome whose data is not one pickle of at most "
                             f"{MAX_PICKLE_BYTES >> 10} KiB")
    return torch.load(io.BytesIO(raw), weights_only=True, map_location="cpu")


def _remove_tree(path: str) -> None:
    import shutil

    shutil.rmtree(path, ignore_errors=True)
