"""Ways around the seccomp filter and Landlock found by an adversarial review, each tried through the
real sandbox: io_uring (its ops are syscalls seccomp never sees), datagram socket pairs (they send to
any unix socket path), and the truncations Landlock ABI 1-2 does not govern (truncate(2), and open
with O_TRUNC but no write access)."""

from __future__ import annotations

import ctypes
import json
import os
import shutil
import socket
import sys
import tempfile
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest
from grader_helpers import fake_drill_client, grade_limits

from studyapp.grader import confine
from studyapp.grader.confine import WITHOUT_ENV, Protection

pytest.importorskip("torch")

TIMEOUT = 10.0
IO_URING_SETUP = 425
"""The same number on x86_64 and aarch64 (the generic table), the two `_SECCOMP_ARCH` knows."""
ABI_CAP = 2
FAKE_ABI_SITECUSTOMIZE = f"""
import landlockpy._syscall as _syscall
_real = _syscall.abi_version
_syscall.abi_version = lambda: min(_real(), {ABI_CAP})  # Ruleset and probe() both ask this
"""
"""Imported by the worker at start: the kernel looks like Linux 5.19 (Landlock ABI 2) to the probe
and to the Ruleset, which then handles only ABI 2's rights, as it would on Ubuntu 22.04."""


def grade_source(client, folder: Path, source: str) -> dict:
    path = folder / "submission.py"
    path.write_text(source)
    return client.grade("add", path, device="cpu", limits=grade_limits(timeout=TIMEOUT, memory_mb=512))


@pytest.fixture
def open_folder() -> Iterator[Path]:
    """A short path (unix socket paths are limited to 108 bytes) that learner code running as
    `nobody` (a root worker's child) can reach too, as it reaches the user's own files otherwise."""
    folder = Path(tempfile.mkdtemp(prefix="sa-gaps-", dir="/tmp"))
    folder.chmod(0o755)
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def io_uring_works_here() -> bool:
    if os.uname().machine not in ("x86_64", "aarch64"):
        return False
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    params = ctypes.create_string_buffer(120)
    fd = libc.syscall(ctypes.c_long(IO_URING_SETUP), ctypes.c_uint(4), params)
    if fd < 0:
        return False  # ENOSYS (no io_uring), EPERM (io_uring_disabled, a container's own filter)
    os.close(fd)
    return True


URING_CONNECT = textwrap.dedent("""
    import ctypes, errno, mmap, os, socket, struct

    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long

    def uring_socket(domain, kind):
        params = ctypes.create_string_buffer(120)
        fd = libc.syscall(ctypes.c_long(425), ctypes.c_uint(4), params)  # io_uring_setup
        if fd < 0:
            raise OSError(ctypes.get_errno(), "io_uring_setup")
        raw = params.raw
        sq_entries, cq_entries = struct.unpack_from("2I", raw, 0)
        sq_off, cq_off = struct.unpack_from("8IQ", raw, 40), struct.unpack_from("8IQ", raw, 80)
        size = max(sq_off[6] + sq_entries * 4, cq_off[5] + cq_entries * 16)
        shared, rw = mmap.MAP_SHARED | 0x8000, mmap.PROT_READ | mmap.PROT_WRITE  # MAP_POPULATE
        ring = mmap.mmap(fd, size, shared, rw, offset=0)
        sqes = mmap.mmap(fd, sq_entries * 64, shared, rw, offset=0x10000000)
        tail, mask = (struct.unpack_from("I", ring, sq_off[i])[0] for i in (1, 2))
        index = tail & mask
        sqe = bytearray(64)
        struct.pack_into("BBHi", sqe, 0, 45, 0, 0, domain)  # IORING_OP_SOCKET; fd = the domain
        struct.pack_into("Q", sqe, 8, kind)  # off = the type
        sqes[index * 64:(index + 1) * 64] = bytes(sqe)
        struct.pack_into("I", ring, sq_off[6] + index * 4, index)
        struct.pack_into("I", ring, sq_off[1], tail + 1)
        if libc.syscall(ctypes.c_long(426), fd, 1, 1, 1, None, 0) < 0:  # io_uring_enter
            raise OSError(ctypes.get_errno(), "io_uring_enter")
        head, cmask = (struct.unpack_from("I", ring, cq_off[i])[0] for i in (0, 2))
        _, res, _ = struct.unpack_from("QiI", ring, cq_off[5] + (head & cmask) * 16)
        if res < 0:
            raise OSError(-res, "IORING_OP_SOCKET")
        return res

    def reach(path):
        try:
            fd = uring_socket(socket.AF_UNIX, socket.SOCK_STREAM)
        except OSError as exc:
            return errno.errorcode.get(exc.errno, str(exc.errno)) + f" ({exc.strerror})"
        with socket.socket(fileno=fd) as sock:
            sock.connect(path)
            sock.sendall(b"hello from the sandbox")
        return "connected"

    def add(a, b):
        outcome = reach(SERVER)
        if outcome != "ENOSYS (io_uring_setup)":
            raise RuntimeError(f"io_uring: {outcome}")
        return a + b
""")


@pytest.mark.skipif(not io_uring_works_here(), reason="no io_uring for this process (kernel, sysctl or container)")
def test_io_uring_cannot_make_a_unix_socket_around_the_filter(warm_fake_grader, tmp_path, open_folder):
    """IORING_OP_SOCKET makes the AF_UNIX socket that socket(2) refuses: io_uring_setup must be ENOSYS."""
    path = str(open_folder / "bus")
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as server:
        server.bind(path)
        os.chmod(path, 0o777)
        server.listen(4)
        server.setblocking(False)
        verdict = grade_source(warm_fake_grader, tmp_path, f"SERVER = {path!r}\n" + URING_CONNECT)
        if Protection.UNIX_SOCKETS.value not in verdict["sandbox"]["active"]:
            pytest.skip("no seccomp filter on this machine")
        with pytest.raises(BlockingIOError):
            server.accept()[0].close()  # nobody connected
    assert verdict["status"] == "pass", verdict


DGRAM_SEND = textwrap.dedent("""
    import socket

    def add(a, b):
        seen = []
        try:
            one, other = socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)
        except PermissionError:
            seen.append("dgram pair refused")
        else:  # a datagram socket sends to any path, connected or not
            for send in (lambda: one.sendto(b"sendto", SERVER), lambda: (one.connect(SERVER), one.send(b"connect"))):
                try:
                    send()
                    seen.append("dgram sent")
                except OSError as exc:
                    seen.append(f"dgram {type(exc).__name__}")
        one, other = socket.socketpair()  # a stream pair: harmless (EISCONN), and multiprocessing.Pipe uses one
        one.sendall(b"ping")
        assert other.recv(4) == b"ping"
        try:
            one.sendto(b"x", SERVER)
            seen.append("stream sent")
        except OSError as exc:
            seen.append(f"stream {type(exc).__name__}")
        if seen != ["dgram pair refused", "stream OSError"]:
            raise RuntimeError(", ".join(seen))
        return a + b
""")


def test_a_datagram_socket_pair_cannot_send_to_a_unix_socket_path(warm_fake_grader, tmp_path, open_folder):
    """socketpair(AF_UNIX, SOCK_DGRAM) is no path connection at first, but a datagram socket can
    sendto() or connect() any path (journald, /dev/log): only stream and seqpacket pairs stay allowed."""
    path = str(open_folder / "log")
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as server:
        server.bind(path)
        os.chmod(path, 0o777)
        server.setblocking(False)
        verdict = grade_source(warm_fake_grader, tmp_path, f"SERVER = {path!r}\n" + DGRAM_SEND)
        if Protection.UNIX_SOCKETS.value not in verdict["sandbox"]["active"]:
            pytest.skip("no seccomp filter on this machine")
        with pytest.raises(BlockingIOError):
            server.recv(100)  # nothing arrived
    assert verdict["status"] == "pass", verdict


TRUNCATIONS = textwrap.dedent("""
    import os

    def attempt(what, action):
        try:
            action()
            return f"{what}: done"
        except OSError as exc:
            return f"{what}: {type(exc).__name__}"

    def add(a, b):
        seen = [
            attempt("truncate(2)", lambda: os.truncate(NOTE, 0)),
            attempt("O_ACCMODE|O_TRUNC", lambda: os.close(os.open(LOG, 3 | os.O_TRUNC))),  # no read, no write
        ]
        if LIBRARY:
            seen.append(attempt("O_RDONLY|O_TRUNC", lambda: os.close(os.open(LIBRARY, os.O_RDONLY | os.O_TRUNC))))
        with open("scratch.txt", "w") as file:  # O_WRONLY|O_TRUNC in its own folder: allowed
            file.write("scratch")
        with open("scratch.txt", "r+") as file:  # ftruncate on a file it may write: allowed
            file.truncate(3)
        with open("scratch.txt") as file:
            if file.read() != "scr":
                seen.append("scratch writes broken")
        if any(not line.endswith("PermissionError") for line in seen):
            raise RuntimeError("; ".join(seen))
        return a + b
""")


@pytest.fixture
def fake_abi_folder() -> Iterator[Path]:
    if confine.landlock_abi() < 1:
        pytest.skip("no Landlock in this kernel")
    folder = Path(tempfile.mkdtemp(prefix="sa-abi-"))
    (folder / "sitecustomize.py").write_text(FAKE_ABI_SITECUSTOMIZE)
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


@pytest.mark.parametrize("without", ["", Protection.UNIX_SOCKETS.value])
def test_on_landlock_abi_2_no_file_of_the_user_can_be_truncated(fake_abi_folder, tmp_path, open_folder, without):
    """Landlock governs truncation from ABI 3 on; below it truncate(2) and an open with O_TRUNC but
    no write access (O_RDONLY, or the access mode 3) cut any file DAC lets the user write, in or out
    of the folders Landlock lets it read. The filter refuses them, even with its socket rule off."""
    note, log = open_folder / "notes.md", open_folder / "reviews.jsonl"
    library = Path(sys.prefix) / f"studyapp-test-library-{os.getpid()}.py"  # in a venv the user owns
    targets = (note, log, library) if os.access(sys.prefix, os.W_OK) else (note, log)
    try:
        for target in targets:
            target.write_text("precious")
            target.chmod(0o666)  # the user's own file, writable also by a root worker's `nobody`
        grader = fake_drill_client()
        grader.env["PYTHONPATH"] = os.pathsep.join((str(fake_abi_folder), grader.env["PYTHONPATH"]))
        grader.env[WITHOUT_ENV] = without
        readable = str(library) if library in targets else ""
        source = f"NOTE, LOG, LIBRARY = {str(note)!r}, {str(log)!r}, {readable!r}\n" + TRUNCATIONS
        with grader:
            verdict = grade_source(grader, tmp_path, source)
        contents = {target.name: target.read_text() for target in targets}
    finally:
        library.unlink(missing_ok=True)
    sandbox = verdict["sandbox"]
    assert sandbox["landlock_abi"] == min(confine.landlock_abi(), ABI_CAP), sandbox
    assert Protection.FILES.value in sandbox["active"], sandbox
    assert set(contents.values()) == {"precious"}, (contents, json.dumps(verdict)[:2000])
    assert verdict["status"] == "pass", verdict


def test_below_abi_3_files_is_not_claimed_without_the_filter_that_refuses_truncate(monkeypatch):
    """Keep the probe honest: where the truncate rule cannot be installed, Landlock ABI 1-2 is no
    "files" wall (any of the user's files could be emptied), while ABI 3 governs truncate itself."""
    monkeypatch.setattr(confine, "_SECCOMP_ARCH", {})  # as on an architecture the filter does not know
    monkeypatch.delenv(WITHOUT_ENV, raising=False)
    for abi in (1, 2):
        monkeypatch.setattr(confine, "landlock_abi", lambda abi=abi: abi)
        found = confine.probe()
        assert not found.has(Protection.FILES) and "truncate" in found.missing[Protection.FILES], found
        assert not found.has(Protection.UNIX_SOCKETS), found
    monkeypatch.setattr(confine, "landlock_abi", lambda: 3)
    assert confine.probe().has(Protection.FILES)
    monkeypatch.undo()
    monkeypatch.setattr(confine, "landlock_abi", lambda: 2)
    if confine._SECCOMP_ARCH.get(os.uname().machine):
        assert confine.probe().has(Protection.FILES)
