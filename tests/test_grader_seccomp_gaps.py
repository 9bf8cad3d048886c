"""Ways around the seccomp filter and Landlock found by an adversarial review, each tried through the
real sandbox: io_uring (its ops are syscalls seccomp never sees), datagram socket pairs (they send to
any unix socket path), the truncations Landlock ABI 1-2 does not govern (truncate(2), and open
with O_TRUNC but no write access), the changes to a file's mode, owner, times and attributes that
no Landlock ABI governs, and the open with access mode 3 that needs no Landlock right below ABI 5."""

from __future__ import annotations

import ctypes
import errno
import fcntl
import json
import os
import re
import shutil
import socket
import struct
import sys
import tempfile
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest
from grader_helpers import fake_drill_client, grade_limits

from studyapp.grader import confine
from studyapp.grader.confine import WITHOUT_ENV, Protection
from studyapp.grader.limits import UNPRIVILEGED_UID

pytest.importorskip("torch")

TIMEOUT = 10.0
IO_URING_SETUP = 425
"""The same number on x86_64 and aarch64 (the generic table), the two `_SECCOMP_ARCH` knows."""
ABI_CAP = 2
FAKE_ABI_SITECUSTOMIZE = """
import landlockpy._syscall as _syscall
_real = _syscall.abi_version
_syscall.abi_version = lambda: min(_real(), {cap})  # Ruleset and probe() both ask this
"""
"""Imported by the worker at start: with cap 2 the kernel looks like Linux 5.19 (Landlock ABI 2)
to the probe and to the Ruleset, which then handles only ABI 2's rights, as it would on Ubuntu
22.04; with cap 4, like Linux 6.7 (no LANDLOCK_ACCESS_FS_IOCTL_DEV)."""


def grade_source(client, folder: Path, source: str) -> dict:
    path = folder / "submission.py"
    path.write_text(source)
    return client.grade("add", path, device="cpu", limits=grade_limits(timeout=TIMEOUT, memory_mb=512))


@pytest.fixture(scope="module")
def raw_grader():
    """A warm worker on the fake drill whose children let learner code use ctypes ("native" off):
    these tests make raw syscalls, to see what the kernel's walls stop without the guard's help."""
    from grader_helpers import warm_up

    grader = fake_drill_client()
    assert grader.env is not None
    grader.env[WITHOUT_ENV] = "native"
    with grader:
        warm_up(grader)
        yield grader


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
def test_io_uring_cannot_make_a_unix_socket_around_the_filter(raw_grader, tmp_path, open_folder):
    """IORING_OP_SOCKET makes the AF_UNIX socket that socket(2) refuses: io_uring_setup must be ENOSYS."""
    path = str(open_folder / "bus")
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as server:
        server.bind(path)
        os.chmod(path, 0o777)
        server.listen(4)
        server.setblocking(False)
        verdict = grade_source(raw_grader, tmp_path, f"SERVER = {path!r}\n" + URING_CONNECT)
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
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def fake_abi_grader(folder: Path, cap: int, without: str):
    """A fresh grader whose worker sees Landlock ABI min(the kernel's, `cap`), with `without` off
    and ctypes allowed ("native")."""
    (folder / "sitecustomize.py").write_text(FAKE_ABI_SITECUSTOMIZE.format(cap=cap))
    grader = fake_drill_client()
    grader.env["PYTHONPATH"] = os.pathsep.join((str(folder), grader.env["PYTHONPATH"]))
    grader.env[WITHOUT_ENV] = ",".join(filter(None, [without, "native"]))  # their files make raw syscalls
    return grader


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
        grader = fake_abi_grader(fake_abi_folder, ABI_CAP, without)
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


def test_files_is_not_claimed_without_the_filter_that_completes_landlock(monkeypatch):
    """Keep the probe honest: where the filter's file rules cannot be installed, Landlock is no
    "files" wall at any ABI, since no ABI governs chmod, chown, utime or xattrs (any of the user's
    files could be made unreadable), and ABI 1-2 do not govern truncation either."""
    monkeypatch.setattr(confine, "_SECCOMP_ARCH", {})  # as on an architecture the filter does not know
    monkeypatch.delenv(WITHOUT_ENV, raising=False)
    for abi in range(1, 8):
        monkeypatch.setattr(confine, "landlock_abi", lambda abi=abi: abi)
        found = confine.probe()
        assert not found.has(Protection.FILES), found
        why = found.missing[Protection.FILES]
        assert "mode" in why and ("truncate" in why) == (abi < confine.TRUNCATE_ABI), why
        assert not found.has(Protection.UNIX_SOCKETS), found
    monkeypatch.undo()
    if confine._SECCOMP_ARCH.get(os.uname().machine):
        for abi in (2, 4, 7):
            monkeypatch.setattr(confine, "landlock_abi", lambda abi=abi: abi)
            assert confine.probe().has(Protection.FILES)


ATTRIBUTES = textwrap.dedent("""
    import ctypes, errno, fcntl, os, struct

    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    AT_FDCWD = -100
    FS_IOC_GETFLAGS, FS_IOC_SETFLAGS, FS_NODUMP_FL = 0x80086601, 0x40086602, 0x40

    def raw(number, *args):  # numbers the libc wrappers may not use (or not have)
        args = [ctypes.c_long(a) if isinstance(a, int) else a for a in args]  # full registers, not C ints
        if libc.syscall(ctypes.c_long(number), *args) < 0:
            raise OSError(ctypes.get_errno(), f"syscall {number}")

    def attempt(what, action):
        try:
            action()
            return f"{what}: done"
        except OSError as exc:
            return f"{what}: {errno.errorcode.get(exc.errno, exc.errno)}"

    def setflags(fd):
        flags = bytearray(4)
        fcntl.ioctl(fd, FS_IOC_GETFLAGS, flags)
        fcntl.ioctl(fd, FS_IOC_SETFLAGS, struct.pack("i", struct.unpack("i", flags)[0] | FS_NODUMP_FL))

    def add(a, b):
        st = os.stat(NOTE)
        path = NOTE.encode()
        value = ctypes.create_string_buffer(b"learner")
        xattr_args = struct.pack("QII", ctypes.addressof(value), 7, 0)  # value, size, flags
        file_attr = struct.pack("QIIII", 0x80, 0, 0, 0, 0)  # fa_xflags = FS_XFLAG_NODUMP
        seen = [
            attempt("chown", lambda: os.chown(NOTE, st.st_uid, st.st_gid)),
            attempt("lchown", lambda: os.chown(NOTE, st.st_uid, st.st_gid, follow_symlinks=False)),
            attempt("utimensat", lambda: os.utime(NOTE, (0, 0))),
            attempt("utimensat now", lambda: os.utime(NOTE)),
            attempt("setxattr", lambda: os.setxattr(NOTE, "user.learner", b"1")),
            attempt("lsetxattr", lambda: os.setxattr(NOTE, "user.learner", b"1", follow_symlinks=False)),
            attempt("removexattr", lambda: os.removexattr(NOTE, "user.keep")),
            attempt("lremovexattr", lambda: os.removexattr(NOTE, "user.keep", follow_symlinks=False)),
            attempt("fchmodat2", lambda: raw(452, AT_FDCWD, path, 0o777, 0)),
            attempt("setxattrat", lambda: raw(463, AT_FDCWD, path, 0, b"user.learner", xattr_args, 16)),
            attempt("removexattrat", lambda: raw(466, AT_FDCWD, path, 0, b"user.keep")),
            attempt("file_setattr", lambda: raw(469, AT_FDCWD, path, file_attr, 24, 0)),
        ]
        if X86_64:  # the legacy calls the generic table (aarch64) lacks
            seen += [
                attempt("chown(2)", lambda: raw(92, path, st.st_uid, st.st_gid)),
                attempt("lchown(2)", lambda: raw(94, path, st.st_uid, st.st_gid)),
                attempt("utime(2)", lambda: raw(132, path, None)),
                attempt("utimes(2)", lambda: raw(235, path, None)),
                attempt("futimesat(2)", lambda: raw(261, AT_FDCWD, path, None)),
            ]
        try:  # access mode 3: no Landlock right needed (ABI 5 governs only device ioctls), yet an fd
            fd = os.open(NOTE, 3)
        except PermissionError:
            pass  # refused (below ABI 5): nothing to try through it
        else:
            seen += [
                attempt("fchmod", lambda: os.fchmod(fd, 0o777)),
                attempt("fchown", lambda: os.fchown(fd, st.st_uid, st.st_gid)),
                attempt("futimens", lambda: os.utime(fd, (0, 0))),
                attempt("fsetxattr", lambda: os.setxattr(fd, "user.learner", b"1")),
                attempt("fremovexattr", lambda: os.removexattr(fd, "user.keep")),
                attempt("FS_IOC_SETFLAGS", lambda: setflags(fd)),
            ]
            os.close(fd)
        seen.append(attempt("chmod", lambda: os.chmod(NOTE, 0)))  # last: mode 0 would stop the rest (DAC)
        if X86_64:
            seen.append(attempt("chmod(2)", lambda: raw(90, path, 0)))
        with open("scratch.txt", "w") as file:  # its own folder: writing stays, chmod is refused there too
            file.write("scratch")
        seen.append(attempt("chmod in scratch", lambda: os.chmod("scratch.txt", 0o600)))
        if any(not line.endswith(": EPERM") for line in seen):
            raise RuntimeError("; ".join(seen))
        return a + b
""")


def xattrs_of(path: Path) -> dict[str, bytes] | None:
    try:
        return {name: os.getxattr(path, name) for name in os.listxattr(path)}
    except OSError:
        return None


def flags_of(path: Path) -> int | None:
    """FS_IOC_GETFLAGS (chattr's flags), None where the file system has none."""
    flags = bytearray(4)
    try:
        with open(path, "rb") as file:
            fcntl.ioctl(file.fileno(), 0x80086601, flags)
    except OSError:
        return None
    return struct.unpack("i", flags)[0]


def test_learner_code_cannot_change_the_mode_owner_times_or_attributes_of_a_users_file(
        raw_grader, tmp_path, open_folder):
    """No Landlock ABI governs chmod, chown, utime, xattrs or chattr flags: learner code running as
    the user (the grader's usual case) could chmod the user's notes to 0 (the app can no longer read
    them), change their times (fooling the app's cache, keyed by size and mtime) or their xattrs.
    The note here belongs to the uid learner code runs as (nobody, for a root worker), so that
    only the filter stands in the way; every such call must be EPERM, in its scratch folder too."""
    note = open_folder / "notes.md"
    note.write_text("precious")
    note.chmod(0o644)
    try:
        os.setxattr(note, "user.keep", b"kept")
    except OSError as exc:
        if exc.errno not in (errno.ENOTSUP, errno.EOPNOTSUPP):
            raise
    if os.geteuid() == 0:
        os.chown(note, UNPRIVILEGED_UID, UNPRIVILEGED_UID)  # nobody's, as the user's notes are the user's
    before = note.stat()
    xattrs, flags = xattrs_of(note), flags_of(note)
    source = f"NOTE, X86_64 = {str(note)!r}, {os.uname().machine == 'x86_64'}\n" + ATTRIBUTES
    verdict = grade_source(raw_grader, tmp_path, source)
    if Protection.FILES.value not in verdict["sandbox"]["active"]:
        pytest.skip("no Landlock (files) on this machine")
    after = note.stat()
    assert (after.st_mode, after.st_uid, after.st_gid) == (before.st_mode, before.st_uid, before.st_gid)
    assert (after.st_mtime_ns, after.st_atime_ns, after.st_ctime_ns) == (
        before.st_mtime_ns, before.st_atime_ns, before.st_ctime_ns)  # ctime: no change of any kind
    assert (xattrs_of(note), flags_of(note)) == (xattrs, flags)
    assert note.read_text() == "precious"
    assert verdict["status"] == "pass", json.dumps(verdict)[:3000]


MODE_3_OPENS = textwrap.dedent("""
    import errno, os

    def attempt(what, action):
        try:
            os.close(action())
            return f"{what}: done"
        except OSError as exc:
            return f"{what}: {errno.errorcode.get(exc.errno, exc.errno)}"

    def add(a, b):
        folder = os.open(os.path.dirname(NOTE), os.O_PATH)  # O_PATH: no Landlock right either
        seen = [
            attempt("open(3)", lambda: os.open(NOTE, 3)),
            attempt("openat(3)", lambda: os.open(os.path.basename(NOTE), 3, dir_fd=folder)),
            attempt("open(3|O_NONBLOCK)", lambda: os.open(NOTE, 3 | os.O_NONBLOCK)),
            attempt("open(/dev/null, 3)", lambda: os.open("/dev/null", 3)),
        ]
        with open("scratch.txt", "w") as file:  # its own folder: ordinary opens stay
            file.write("scratch")
        with open("scratch.txt", "r+") as file:
            file.write("S")
        seen.append(attempt("open(3) in scratch", lambda: os.open("scratch.txt", 3)))
        for what, flags in (("O_RDONLY", os.O_RDONLY), ("O_WRONLY", os.O_WRONLY), ("O_RDWR", os.O_RDWR)):
            if attempt(what, lambda: os.open("scratch.txt", flags)) != f"{what}: done":
                seen.append(f"{what} in scratch refused")
        if any(not line.endswith(": EACCES") for line in seen):
            raise RuntimeError("; ".join(seen))
        return a + b
""")


@pytest.mark.parametrize(("cap", "without"), [(4, ""), (2, ""), (4, Protection.UNIX_SOCKETS.value)])
def test_below_landlock_abi_5_no_file_is_opened_with_access_mode_3(fake_abi_folder, tmp_path, open_folder,
                                                                    cap, without):
    """Access mode 3 (O_ACCMODE) asks for neither read nor write, so Landlock checks no right at
    all: below ABI 5 (no LANDLOCK_ACCESS_FS_IOCTL_DEV) such an fd reaches any device node's ioctls,
    and any of the user's files' (chattr flags, fchmod). The filter refuses the open (EACCES),
    with or without its socket rule, at ABI 2 (where it also tests O_TRUNC) and ABI 4."""
    note = open_folder / "notes.md"
    note.write_text("precious")
    note.chmod(0o666)  # DAC lets the learner open it for reading and writing: only Landlock could refuse
    with fake_abi_grader(fake_abi_folder, cap, without) as grader:
        verdict = grade_source(grader, tmp_path, f"NOTE = {str(note)!r}\n" + MODE_3_OPENS)
    sandbox = verdict["sandbox"]
    assert sandbox["landlock_abi"] == min(confine.landlock_abi(), cap), sandbox
    assert Protection.FILES.value in sandbox["active"], sandbox
    assert verdict["status"] == "pass", json.dumps(verdict)[:3000]


def header_numbers(*paths: str) -> dict[str, int]:
    """name -> number in the first of `paths` that exists ({} when none does)."""
    text = next((Path(p).read_text() for p in paths if Path(p).is_file()), "")
    return {m[1]: int(m[2]) for m in re.finditer(r"^#define __NR(?:3264)?_(\w+)\s+(\d+)\s*$", text, re.M)}


@pytest.mark.parametrize(("machine", "headers"), [
    ("x86_64", ("/usr/include/x86_64-linux-gnu/asm/unistd_64.h", "/usr/include/asm/unistd_64.h")),
    ("aarch64", ("/usr/include/asm-generic/unistd.h",))])
def test_the_filters_syscall_numbers_are_the_kernels(machine, headers):
    """Every number in `_SECCOMP_ARCH` as the kernel's headers have it (where this machine has
    them; a name newer than the headers is left to the sandbox tests, which call it by number)."""
    known = header_numbers(*headers)
    if not known:
        pytest.skip(f"none of {headers} here")
    calls = confine._SECCOMP_ARCH[machine]
    named = [("io_uring_setup", calls.io_uring[0]), ("io_uring_enter", calls.io_uring[1]),
             ("io_uring_register", calls.io_uring[2]), *calls.attributes]
    named += [(field, number) for field, number in calls._asdict().items() if isinstance(number, int)]
    checked = [(name, number) for name, number in named if name in known]
    assert [(name, known[name]) for name, _ in checked] == checked
    assert len(checked) >= 20, checked


def run_bpf(program: list[tuple[int, int, int, int]], arch: int, number: int, *args: int) -> int:
    """What classic BPF `program` returns for this seccomp_data (the few instructions `_Bpf` writes)."""
    data = struct.pack("<iIQ6Q", number, arch, 0, *(list(args) + [0] * (6 - len(args))))
    a, at = 0, 0
    while True:
        code, jt, jf, k = program[at]
        at += 1
        if code == 0x20:
            a = struct.unpack_from("<I", data, k)[0]
        elif code == 0x54:
            a &= k
        elif code == 0x05:
            at += k
        elif code in (0x15, 0x35, 0x45):
            taken = a == k if code == 0x15 else a >= k if code == 0x35 else bool(a & k)
            at += jt if taken else jf
        else:
            assert code == 0x06, code
            return k


@pytest.mark.parametrize("machine", sorted(confine._SECCOMP_ARCH))
def test_the_filters_decisions_on_each_machine_and_landlock_abi(machine):
    """Every rule, decided by the filter itself (emulated: aarch64's numbers cannot be tried on an
    x86_64 machine): what each Landlock ABI leaves to it, and what stays allowed."""
    calls = confine._SECCOMP_ARCH[machine]
    allow, eacces, eperm, enosys = 0x7FFF0000, 0x50000 | errno.EACCES, 0x50000 | errno.EPERM, 0x50000 | errno.ENOSYS
    read = {"x86_64": 0, "aarch64": 63}[machine]
    for abi in range(8):
        for unix_sockets in (True, False):
            program = confine.seccomp_program(calls, unix_sockets, abi)

            def decide(number: int, *args: int, program=program) -> int:
                return run_bpf(program, calls.audit_arch, number, *args)

            files, below_3, below_5 = abi >= 1, 1 <= abi < 3, 1 <= abi < 5
            assert decide(read, 0) == allow
            assert run_bpf(program, 0x40000003, read) == enosys  # i386
            assert decide(calls.io_uring[0]) == enosys
            assert decide(calls.socket, socket.AF_UNIX) == (eacces if unix_sockets else allow)
            assert decide(calls.socket, socket.AF_INET) == allow
            for name, number in calls.attributes:
                assert decide(number, 0, 0) == (eperm if files else allow), (name, abi)
            for request in confine.ATTRIBUTE_IOCTLS:
                assert decide(calls.ioctl, 3, request) == (eperm if files else allow)
                assert decide(calls.ioctl, 3, request | 0xFFFF_FFFF << 32) == (eperm if files else allow)
            assert decide(calls.ioctl, 3, 0x5401) == allow  # TCGETS
            assert decide(calls.truncate) == (eacces if below_3 else allow)
            assert decide(calls.openat2) == (enosys if below_5 else allow)
            opens = [(calls.openat, 2), (calls.open_by_handle_at, 2)]
            opens += [] if calls.open is None else [(calls.open, 1)]
            for number, at in opens:
                def flags(value: int, number=number, at=at) -> int:
                    return decide(number, *([0] * at), value)

                assert flags(os.O_RDONLY) == flags(os.O_WRONLY) == flags(os.O_RDWR | os.O_CREAT) == allow
                assert flags(os.O_WRONLY | os.O_TRUNC) == flags(os.O_RDWR | os.O_TRUNC) == allow
                assert flags(os.O_RDONLY | os.O_TRUNC) == (eacces if below_3 else allow), (machine, abi)
                assert flags(3) == flags(3 | os.O_NONBLOCK) == (eacces if below_5 else allow), (machine, abi)
                assert flags(3 | os.O_TRUNC) == (eacces if below_5 else allow), (machine, abi)
                assert flags(os.O_PATH) == allow
