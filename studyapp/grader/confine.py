"""The walls around a learner's child: Landlock, namespaces, and a tree that dies with its root.

`probe()` finds out once, in the worker, which protections this kernel and this user allow (and
`doctor` prints the same probe); the child then applies exactly that `Confinement` and refuses to
run learner code if any part of it fails, so a verdict never claims a wall that was not there.

The child process (C) is forked from the worker; with a PID namespace it forks once more and the
learner's code runs in the namespace's first process (L): when L ends, or when C or the worker
dies (PDEATHSIG), the kernel kills every process left in the namespace.

~730 lines on purpose: every wall (probe, apply, the seccomp filter and the scratch folder's
tmpfs quota) lives here, so what the sandbox promises can be read, and audited, in one file.
"""

from __future__ import annotations

import ctypes
import functools
import importlib.util
import os
import signal
import socket
import sys
from collections.abc import Iterable
from dataclasses import dataclass, field
from enum import Enum
from typing import NamedTuple

CLONE_NEWNS = 0x00020000
CLONE_NEWIPC = 0x08000000
CLONE_NEWUSER = 0x10000000
CLONE_NEWPID = 0x20000000
CLONE_NEWNET = 0x40000000
MS_NOSUID = 0x2
MS_NODEV = 0x4
MS_REC = 0x4000
MS_PRIVATE = 0x40000
PR_SET_DUMPABLE = 4
PR_SET_SECCOMP = 22
PR_SET_NO_NEW_PRIVS = 38
SECCOMP_MODE_FILTER = 2
ETC_FILES = ("ld.so.cache", "localtime", "passwd", "group", "nsswitch.conf", "hosts", "host.conf",
             "resolv.conf", "os-release", "mime.types", "gai.conf")
"""The few files in /etc that Python and libc look at; the rest of /etc stays unreadable."""
DEVICES_READ = ("/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom")
CUDA_DEVICE_PREFIXES = ("nvidia", "dri")
"""Device nodes the CUDA child opens after Landlock is on (read, write and ioctl)."""
WITHOUT_ENV = "STUDYAPP_GRADER_WITHOUT"
OPTIONAL_NAMES = ("files", "tcp", "signals", "network namespace", "pid namespace", "no unix sockets",
                  "scratch quota")
"""Comma-separated protections to leave off, as if the kernel lacked them (tests of the fallbacks).
Leaving "no unix sockets" off keeps the filter's file rules, which "files" needs."""
TRUNCATE_ABI = 3
"""The Landlock ABI that governs truncation (LANDLOCK_ACCESS_FS_TRUNCATE, Linux 6.2); below it the
seccomp filter refuses truncating instead (`seccomp_program`)."""
IOCTL_DEV_ABI = 5
"""The Landlock ABI that governs ioctl on device nodes (LANDLOCK_ACCESS_FS_IOCTL_DEV, Linux 6.10);
below it the seccomp filter refuses opens with access mode 3, which ask for no right Landlock checks
(`seccomp_program`)."""
ATTRIBUTE_IOCTLS = (0x40086602, 0x40046602, 0x401C5820)
"""FS_IOC_SETFLAGS, FS_IOC32_SETFLAGS and FS_IOC_FSSETXATTR (chattr's flags, and the fs-xattr flags
and project id): the same on x86_64 and aarch64. No Landlock ABI governs ioctl on a regular file."""


class Protection(str, Enum):
    """One wall around the child; the verdict and `doctor` list the ones that are up."""

    FILES = "files"
    """Landlock: it writes only its scratch folder and reads only Python, torch and system libraries.
    Landlock governs neither changes to a file's mode, owner, times or attributes (chmod, chown,
    utime, xattrs, chattr flags: at no ABI), nor truncation below ABI 3, nor opens with access mode
    3 below ABI 5: the seccomp filter refuses those (`seccomp_program`), and without that filter
    this wall is not claimed."""
    TCP = "tcp"
    """Landlock: no TCP bind or connect."""
    SCOPE = "signals"
    """Landlock scope: no signals and no abstract unix sockets outside its own processes."""
    NETWORK = "network namespace"
    """A network namespace of its own: no interface but a downed loopback, so no network at all."""
    UNIX_SOCKETS = "no unix sockets"
    """seccomp: no AF_UNIX sockets (nor io_uring, which makes them unseen, nor datagram socket pairs,
    which send to any path), so no reaching a session bus or docker.sock by path (Landlock < 9 can't)."""
    PROCESS_TREE = "pid namespace"
    """A PID namespace: it cannot name outside processes, and all of its processes die with it."""
    SCRATCH_QUOTA = "scratch quota"
    """Its scratch folder is a size-limited tmpfs in a mount namespace of its own: the kernel says
    ENOSPC at the cap. Without it the grader measures the folder while the code runs."""
    OTHER_USER = "runs as nobody"
    """A root worker runs learner code as `nobody`."""
    NO_PROC_FDS = "worker not dumpable"
    """The worker's /proc entries (its fds, its memory) belong to root: its pipes cannot be reopened."""


@dataclass(frozen=True)
class Confinement:
    """What the child gets on this machine, and why each missing wall is missing."""

    active: tuple[Protection, ...] = ()
    missing: dict[Protection, str] = field(default_factory=dict)
    landlock_abi: int = 0
    new_user_namespace: bool = False
    """Namespaces are made inside a new user namespace (the worker is not root)."""

    def has(self, protection: Protection) -> bool:
        return protection in self.active

    def to_dict(self) -> dict:
        """The plain form a verdict carries (JSON)."""
        return {"active": [p.value for p in self.active],
                "missing": {p.value: reason for p, reason in self.missing.items()},
                "landlock_abi": self.landlock_abi, "new_user_namespace": self.new_user_namespace}

    @classmethod
    def from_dict(cls, data: dict) -> Confinement:
        """Back from `to_dict` (the CUDA child gets its confinement through the environment)."""
        return cls(tuple(Protection(p) for p in data["active"]),
                   {Protection(p): why for p, why in data["missing"].items()},
                   int(data["landlock_abi"]), bool(data.get("new_user_namespace")))

    def describe(self) -> str:
        """One line for `doctor`."""
        text = (f"Landlock ABI {self.landlock_abi}; " if self.landlock_abi else "") + (
            ", ".join(p.value for p in self.active) or "none")
        if self.missing:
            text += "; missing: " + "; ".join(f"{p.value} ({why})" for p, why in self.missing.items())
        return text


OPTIONAL = tuple(Protection(name) for name in OPTIONAL_NAMES)
"""The protections that depend on the kernel (the others are always applied)."""


def _libc() -> ctypes.CDLL:
    return ctypes.CDLL(None, use_errno=True)


def unshare(flags: int) -> None:
    """unshare(2) (os.unshare is Python >= 3.12 only)."""
    if _libc().unshare(flags) != 0:
        errno = ctypes.get_errno()
        raise OSError(errno, os.strerror(errno))


def make_undumpable() -> None:
    """The worker's /proc/<pid>/fd and /proc/<pid>/mem become root's: its pipes cannot be reopened."""
    _libc().prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)


def landlock_abi() -> int:
    """The kernel's Landlock ABI version, 0 when it has none (or landlockpy is missing)."""
    try:
        import landlockpy
    except ImportError:
        return 0
    try:
        return landlockpy.abi_version()
    except OSError:
        return 0


def _namespace_flags(as_root: bool) -> int:
    flags = CLONE_NEWNET | CLONE_NEWPID | CLONE_NEWIPC  # IPC: no System V shm or mqueues of the user's
    return flags if as_root else flags | CLONE_NEWUSER


def _try_in_a_fork(action) -> str | None:
    """Run `action` in a short-lived child; None when it worked, else why it did not."""
    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read_fd)
        try:
            action()
            os._exit(0)
        except BaseException as exc:  # noqa: BLE001 - the reason goes back to the parent
            os.write(write_fd, f"{type(exc).__name__}: {exc}".encode()[:300])
            os._exit(1)
    os.close(write_fd)
    with os.fdopen(read_fd, "rb") as reader:
        reason = reader.read().decode("utf-8", "replace")
    _, status = os.waitpid(pid, 0)
    return None if status == 0 else (reason or f"exit status {status}")


def _unshare(as_root: bool, mount: bool) -> None:
    """unshare(2) into the child's namespaces; with `mount` a mount namespace too, where (as an
    ordinary user) our own uid and gid are mapped, since a tmpfs of a user namespace can only
    hold files whose owner that namespace maps."""
    uid, gid = os.getuid(), os.getgid()  # read before: unmapped, they read as 65534
    unshare(_namespace_flags(as_root) | (CLONE_NEWNS if mount else 0))
    if mount and not as_root:
        _libc().prctl(PR_SET_DUMPABLE, 1, 0, 0, 0)  # else /proc/self is root's (see make_undumpable)
        try:
            for name, text in (("uid_map", f"{uid} {uid} 1"), ("setgroups", "deny"), ("gid_map", f"{gid} {gid} 1")):
                with open(f"/proc/self/{name}", "w") as file:
                    file.write(text)
        finally:
            make_undumpable()


def _drop_capabilities() -> None:
    """All of them: a new user namespace grants every capability in it, and with CAP_SYS_ADMIN
    learner code could unmount its scratch quota (Landlock forbids that too, where it is on)."""
    from studyapp.grader.limits import set_capabilities

    set_capabilities(0)


def _mount(source: str | None, target: str, fstype: str | None, flags: int, data: str | None = None) -> None:
    def c(text: str | None) -> bytes | None:
        return None if text is None else text.encode()

    if _libc().mount(c(source), c(target), c(fstype), ctypes.c_ulong(flags), c(data)) != 0:
        errno = ctypes.get_errno()
        raise OSError(errno, f"mount {target}: {os.strerror(errno)}")


def mount_scratch(path: str, size: int, files: int) -> None:
    """In a new mount namespace: `path` becomes a tmpfs of `size` bytes and `files` inodes."""
    _mount(None, "/", None, MS_REC | MS_PRIVATE)  # first, so that no mount of ours reaches the host
    _mount("studyapp-scratch", path, "tmpfs", MS_NOSUID | MS_NODEV, f"size={size},nr_inodes={files},mode=0700")


def _mount_scratch_in_a_probe() -> None:
    import tempfile

    _unshare(os.geteuid() == 0, mount=True)
    folder = tempfile.gettempdir()  # seen as a tmpfs in this throw-away namespace only
    mount_scratch(folder, 1 << 20, 16)
    with open(os.path.join(folder, "probe"), "wb") as file:
        file.write(b"written")


def _enter_namespaces_and_fork() -> None:
    as_root = os.geteuid() == 0
    _unshare(as_root, mount=False)
    if not as_root:
        _drop_capabilities()
    pid = os.fork()  # the first process of a new PID namespace
    if pid == 0:
        os._exit(0 if os.getpid() == 1 else 1)
    _, status = os.waitpid(pid, 0)
    if status != 0:
        raise OSError("the first process of the new PID namespace is not pid 1")


def _become_nobody() -> None:
    from studyapp.grader.limits import UNPRIVILEGED_UID

    os.setgroups([])
    os.setgid(UNPRIVILEGED_UID)
    os.setuid(UNPRIVILEGED_UID)


def probe() -> Confinement:
    """Which protections this kernel and user allow, tried for real in throw-away children."""
    active: list[Protection] = []
    missing: dict[Protection, str] = {}
    abi = landlock_abi()
    machine = os.uname().machine
    seccomp = None if machine in _SECCOMP_ARCH else f"no seccomp filter for {machine}"
    seccomp = seccomp or _try_in_a_fork(functools.partial(install_filter, unix_sockets=True, landlock_abi=1))
    if abi >= 1 and seccomp is not None:  # every rule, as on the lowest ABI: installable or not at all
        gaps = "changed in mode, owner, times or extended attributes" + (
            " or truncated" if abi < TRUNCATE_ABI else "")
        missing[Protection.FILES] = (f"Landlock (ABI {abi}) lets any of the user's files be {gaps}, "
                                     f"and the seccomp filter that refuses that is unavailable ({seccomp})")
    elif abi >= 1:
        active.append(Protection.FILES)
    elif importlib.util.find_spec("landlockpy") is None:
        missing[Protection.FILES] = "the landlockpy package is not installed"
    else:
        missing[Protection.FILES] = "no Landlock in this kernel (Linux >= 5.13 with landlock in the LSM list)"
    if abi >= 4:
        active.append(Protection.TCP)
    else:
        missing[Protection.TCP] = f"Landlock ABI {abi} < 4"
    if abi >= 6:
        active.append(Protection.SCOPE)
    else:
        missing[Protection.SCOPE] = f"Landlock ABI {abi} < 6: a same-user child could signal the app"
    why_not = _try_in_a_fork(_enter_namespaces_and_fork)
    if why_not is None:
        active += [Protection.NETWORK, Protection.PROCESS_TREE]
    else:
        kind = "namespaces" if os.geteuid() == 0 else "unprivileged user namespaces"
        missing[Protection.NETWORK] = f"{kind} unavailable ({why_not})"
        missing[Protection.PROCESS_TREE] = f"{kind} unavailable ({why_not}); processes are killed by scanning"
    why_not = _try_in_a_fork(_mount_scratch_in_a_probe) if Protection.PROCESS_TREE in active else (
        "comes with the pid namespace, which is unavailable")
    if why_not is None:
        active.append(Protection.SCRATCH_QUOTA)
    else:
        missing[Protection.SCRATCH_QUOTA] = f"no tmpfs of its own ({why_not}): the grader measures the folder instead"
    if seccomp is None:
        active.append(Protection.UNIX_SOCKETS)
    else:
        missing[Protection.UNIX_SOCKETS] = seccomp
    if os.geteuid() == 0:
        why_not = _try_in_a_fork(_become_nobody)
        if why_not is None:
            active.append(Protection.OTHER_USER)
        else:
            missing[Protection.OTHER_USER] = f"cannot switch to nobody ({why_not}): learner code runs as root"
    active.append(Protection.NO_PROC_FDS)
    for name in (n.strip() for n in os.environ.get(WITHOUT_ENV, "").split(",")):
        off = next((p for p in OPTIONAL if p.value == name), None)
        if off in active:
            active.remove(off)
            missing[off] = f"turned off by {WITHOUT_ENV}"
    if Protection.FILES not in active:
        for needs_landlock in (Protection.TCP, Protection.SCOPE):
            if needs_landlock in active:
                active.remove(needs_landlock)
                missing[needs_landlock] = "needs the Landlock ruleset that is off"
    if Protection.NETWORK in active and Protection.PROCESS_TREE not in active:
        active.remove(Protection.NETWORK)  # both come from the same unshare
        missing[Protection.NETWORK] = "comes with the pid namespace, which is off"
    elif Protection.PROCESS_TREE in active and Protection.NETWORK not in active:
        active.remove(Protection.PROCESS_TREE)
        missing[Protection.PROCESS_TREE] = "comes with the network namespace, which is off"
    if Protection.SCRATCH_QUOTA in active and Protection.PROCESS_TREE not in active:
        active.remove(Protection.SCRATCH_QUOTA)
        missing[Protection.SCRATCH_QUOTA] = "comes with the pid namespace, which is off: the grader measures the folder"
    return Confinement(tuple(active), missing, abi, new_user_namespace=os.geteuid() != 0)


def enter_namespaces(confinement: Confinement, scratch: str, scratch_bytes: int, scratch_files: int) -> None:
    """In C: a new network and PID namespace (inside a new user namespace unless root) and, with
    the scratch quota, a mount namespace where `scratch` is a tmpfs of that size."""
    if not confinement.has(Protection.PROCESS_TREE):
        return
    quota = confinement.has(Protection.SCRATCH_QUOTA)
    _unshare(not confinement.new_user_namespace, mount=quota)
    if quota:
        mount_scratch(scratch, scratch_bytes, scratch_files)
    if confinement.new_user_namespace:
        _drop_capabilities()


def fork_learner(confinement: Confinement) -> None:
    """In C, after `enter_namespaces`: fork L and return in L; C waits for L and mirrors its end.

    Without a PID namespace this returns at once (C is the learner's process).
    """
    if not confinement.has(Protection.PROCESS_TREE):
        return
    pid = os.fork()
    if pid == 0:
        return
    _mirror_exit(pid)


def _mirror_exit(pid: int) -> None:
    """C's whole life after forking L: wait, then end the way L ended (the worker reads that)."""
    os.closerange(3, 65536)  # the result pipe must reach EOF when L and its heirs are gone
    while True:
        try:
            _, status = os.waitpid(pid, 0)
            break
        except ChildProcessError:
            os._exit(72)
        except InterruptedError:
            continue
    code = os.waitstatus_to_exitcode(status)
    if code < 0:
        signal.signal(-code, signal.SIG_DFL)
        os.kill(os.getpid(), -code)
    os._exit(code if code >= 0 else 128 - code)


class _Syscalls(NamedTuple):
    """One architecture's numbers for the seccomp filter (the x86_64 table, or the generic one)."""

    audit_arch: int
    socket: int
    socketpair: int
    truncate: int
    open: int | None
    """None where there is only openat (the generic table)."""
    openat: int
    open_by_handle_at: int
    openat2: int
    io_uring: tuple[int, int, int]
    """io_uring_setup, io_uring_enter, io_uring_register."""
    ioctl: int
    attributes: tuple[tuple[str, int], ...]
    """(name, number) of every call that changes a file's mode, owner, times or (extended)
    attributes, by path or by fd, as this table has them."""


def _named(**numbers: int) -> tuple[tuple[str, int], ...]:
    return tuple(numbers.items())


_SECCOMP_ARCH = {
    "x86_64": _Syscalls(0xC000003E, socket=41, socketpair=53, truncate=76, open=2, openat=257,
                        open_by_handle_at=304, openat2=437, io_uring=(425, 426, 427), ioctl=16,
                        attributes=_named(chmod=90, fchmod=91, fchmodat=268, fchmodat2=452, chown=92, fchown=93,
                                          lchown=94, fchownat=260, utime=132, utimes=235, futimesat=261,
                                          utimensat=280, setxattr=188, lsetxattr=189, fsetxattr=190,
                                          removexattr=197, lremovexattr=198, fremovexattr=199, setxattrat=463,
                                          removexattrat=466, file_setattr=469)),
    "aarch64": _Syscalls(0xC00000B7, socket=198, socketpair=199, truncate=45, open=None, openat=56,
                         open_by_handle_at=265, openat2=437, io_uring=(425, 426, 427), ioctl=29,
                         attributes=_named(fchmod=52, fchmodat=53, fchmodat2=452, fchownat=54, fchown=55,
                                           utimensat=88, setxattr=5, lsetxattr=6, fsetxattr=7, removexattr=14,
                                           lremovexattr=15, fremovexattr=16, setxattrat=463, removexattrat=466,
                                           file_setattr=469)),
}
"""machine -> its syscall numbers (AUDIT_ARCH_* first); any other machine gets no filter. Checked
against the kernel's arch/x86/entry/syscalls/syscall_64.tbl and scripts/syscall.tbl (the generic
table, aarch64's) as of Linux 6.18; tests/test_grader_seccomp_gaps.py checks them against the
installed headers and calls the newest (452, 463, 466, 469) by number through the sandbox."""


class _SockFilter(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint16), ("jt", ctypes.c_uint8), ("jf", ctypes.c_uint8), ("k", ctypes.c_uint32)]


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.POINTER(_SockFilter))]


class _Bpf:
    """Classic BPF written with named forward jumps (BPF jumps only forward), resolved by `code()`."""

    LOAD, AND, JA, JEQ, JGE, JSET, RET = 0x20, 0x54, 0x05, 0x15, 0x35, 0x45, 0x06
    """BPF_LD|W|ABS, BPF_ALU|AND|K, BPF_JMP|JA, BPF_JMP|JEQ|K, BPF_JMP|JGE|K, BPF_JMP|JSET|K, BPF_RET|K."""

    def __init__(self) -> None:
        self.ops: list[tuple[int, str | None, str | None, int | str]] = []
        self.labels: dict[str, int] = {}

    def label(self, name: str) -> None:
        self.labels[name] = len(self.ops)

    def load(self, offset: int) -> None:
        self.ops.append((self.LOAD, None, None, offset))

    def and_(self, mask: int) -> None:
        self.ops.append((self.AND, None, None, mask))

    def goto(self, label: str) -> None:
        self.ops.append((self.JA, None, None, label))

    def jump(self, test: int, k: int, jt: str | None = None, jf: str | None = None) -> None:
        """To `jt` when A `test` k holds, else to `jf`; None: on to the next instruction."""
        self.ops.append((test, jt, jf, k))

    def ret(self, value: int) -> None:
        self.ops.append((self.RET, None, None, value))

    def code(self) -> list[tuple[int, int, int, int]]:
        def offset(label: str | None, at: int) -> int:
            return 0 if label is None else self.labels[label] - at - 1

        code = [(op, offset(jt, at), offset(jf, at), offset(k, at) if isinstance(k, str) else k)
                for at, (op, jt, jf, k) in enumerate(self.ops)]
        if any(not (0 <= jt <= 255 and 0 <= jf <= 255) for _, jt, jf, _ in code):
            raise ValueError("a conditional jump longer than 255 instructions")  # classic BPF's jt, jf: 8 bits
        return code


def seccomp_program(calls: _Syscalls, unix_sockets: bool, landlock_abi: int) -> list[tuple[int, int, int, int]]:
    """The filter `install_filter` installs, as (code, jt, jf, k) instructions.

    Always: foreign-ABI syscalls (i386, arm32, x32: numbers the rules below do not know) and
    io_uring fail with ENOSYS, which libraries take for an old kernel and fall back from. io_uring
    goes because its operations (IORING_OP_SOCKET, IORING_OP_OPENAT...) are syscalls that seccomp
    never sees: with it every rule here could be walked around.

    `unix_sockets`: socket() of any family but AF_INET and AF_INET6 fails with EACCES: AF_UNIX, so
    no reaching a session bus or docker.sock by path (Landlock < 9 cannot stop a connect by path),
    and AF_VSOCK (the hypervisor's host, which no namespace or Landlock rule governs), AF_NETLINK,
    AF_ALG, AF_PACKET and the rest, which no drill needs; so does socketpair(AF_UNIX, SOCK_DGRAM),
    since a datagram socket, paired or not, can sendto() or connect() any path (journald, /dev/log).
    Stream and seqpacket pairs stay: already connected, they reach nothing else (EISCONN), and
    multiprocessing.Pipe() makes one.

    `landlock_abi`: the ABI of the Landlock ruleset this filter completes, 0 for none (no file
    rules). With one, whatever its ABI, every call that changes a file's mode, owner, times or
    attributes fails with EPERM (`_Syscalls.attributes`: chmod, chown, utime and their fd and *at
    forms, set/remove xattr, file_setattr, and ioctl's `ATTRIBUTE_IOCTLS`): Landlock governs none
    of them, and learner code running as the user could chmod the user's notes to 0 (the app can
    no longer read them) or change their times (the app's cache is keyed by size and mtime). They
    are refused in its scratch folder too, where a drill has no use for them: shutil.copy (which
    copies the mode) fails there, open(..., "w") does not.

    Below ABI 3, which does not govern truncation: truncate(2) fails with EACCES, and so does an
    open with O_TRUNC whose access mode is not O_WRONLY or O_RDWR: with O_RDONLY Landlock checks
    read access only (the Python install, a venv the user owns), yet it truncates. ftruncate(2) and
    O_WRONLY|O_TRUNC need a file opened for writing, which Landlock ABI 1 governs already.

    Below ABI 5, which does not govern ioctl on device nodes: an open with access mode 3 fails with
    EACCES, O_TRUNC or not. It asks for neither read nor write, so Landlock checks no right at all,
    and the fd serves ioctl on any device node (and truncates, with O_TRUNC). From ABI 5 such an
    fd reaches only what `ATTRIBUTE_IOCTLS` leaves of a regular file's ioctls. openat2(2) is then
    ENOSYS, its flags lying out of the filter's reach in memory (libc falls back to openat).
    """
    import errno as errnos

    files = landlock_abi >= 1
    truncate = files and landlock_abi < TRUNCATE_ABI
    access_mode_3 = files and landlock_abi < IOCTL_DEV_ABI  # implied by truncate (TRUNCATE_ABI < IOCTL_DEV_ABI)
    args = 16  # seccomp_data.args[0], 8 bytes each: the low half (32 bits) comes first on these machines
    allow, deny = 0x7FFF0000, 0x00050000  # SECCOMP_RET_ALLOW, SECCOMP_RET_ERRNO
    bpf = _Bpf()
    bpf.load(4)                                             # A = the syscall's architecture
    bpf.jump(bpf.JEQ, calls.audit_arch, jf="enosys")        # a foreign ABI (i386, arm32): ENOSYS
    bpf.load(0)                                             # A = the syscall's number
    bpf.jump(bpf.JGE, 0x40000000, jt="enosys")              # x32's numbers: ENOSYS
    for number in calls.io_uring:
        bpf.jump(bpf.JEQ, number, jt="enosys")              # io_uring_setup, _enter, _register: ENOSYS
    if unix_sockets:
        bpf.jump(bpf.JEQ, calls.socket, jt="socket")        # socket(): its domain decides
        bpf.jump(bpf.JEQ, calls.socketpair, jt="socketpair")  # socketpair(): its domain and type decide
    if files:
        for _, number in calls.attributes:
            bpf.jump(bpf.JEQ, number, jt="eperm")           # chmod, chown, utime, xattrs...: EPERM
        bpf.jump(bpf.JEQ, calls.ioctl, jt="ioctl")          # ioctl(): its request decides
    if truncate:
        bpf.jump(bpf.JEQ, calls.truncate, jt="eacces")      # truncate(): EACCES
    if access_mode_3:
        bpf.jump(bpf.JEQ, calls.openat2, jt="enosys")       # openat2(): ENOSYS (libc falls back to openat)
        if calls.open is not None:
            bpf.jump(bpf.JEQ, calls.open, jt="open")        # open(): its flags decide
        bpf.jump(bpf.JEQ, calls.openat, jt="openat")        # openat(): its flags decide
        bpf.jump(bpf.JEQ, calls.open_by_handle_at, jt="openat")  # open_by_handle_at(): its flags decide
    bpf.ret(allow)                                          # any other syscall: allowed
    if unix_sockets:
        bpf.label("socket")
        bpf.load(args)                                      # A = args[0], the domain
        bpf.jump(bpf.JEQ, socket.AF_INET, jt="allow")       # AF_INET: allowed
        bpf.jump(bpf.JEQ, socket.AF_INET6, jt="allow", jf="eacces")  # AF_INET6: allowed; any other: EACCES
        bpf.label("socketpair")
        bpf.load(args)                                      # A = args[0], the domain
        bpf.jump(bpf.JEQ, 1, jf="allow")                    # not AF_UNIX: allowed
        bpf.load(args + 8)                                  # A = args[1], the type (| SOCK_NONBLOCK...)
        bpf.and_(0xF)                                       # A &= SOCK_TYPE_MASK
        bpf.jump(bpf.JEQ, 2, jt="eacces", jf="allow")       # SOCK_DGRAM: EACCES, else allowed
    if files:
        bpf.label("ioctl")
        bpf.load(args + 8)                                  # A = args[1], the request (the kernel reads 32 bits)
        for request in ATTRIBUTE_IOCTLS:
            bpf.jump(bpf.JEQ, request, jt="eperm")          # FS_IOC_SETFLAGS...: EPERM
        bpf.goto("allow")                                   # any other request: allowed
    if access_mode_3:
        if calls.open is not None:
            bpf.label("open")
            bpf.load(args + 8)                              # A = args[1], open()'s flags
            bpf.goto("flags")                               # -> the flags' test
        bpf.label("openat")
        bpf.load(args + 16)                                 # A = args[2], openat()'s flags
        bpf.label("flags")
        if truncate:
            bpf.jump(bpf.JSET, os.O_TRUNC, jf="access mode")  # no O_TRUNC: only the access mode 3 test
            bpf.and_(os.O_ACCMODE)                          # A = the access mode
            bpf.jump(bpf.JEQ, os.O_WRONLY, jt="allow")      # O_WRONLY: Landlock checks write access
            bpf.jump(bpf.JEQ, os.O_RDWR, jt="allow", jf="eacces")  # O_RDWR: so it does; O_RDONLY or 3: EACCES
            bpf.label("access mode")
        bpf.and_(os.O_ACCMODE)                              # A = the access mode
        bpf.jump(bpf.JEQ, os.O_ACCMODE, jt="eacces", jf="allow")  # 3: EACCES, else allowed
    bpf.label("allow")
    bpf.ret(allow)                                          # allowed
    bpf.label("eacces")
    bpf.ret(deny | errnos.EACCES)                           # refused: EACCES
    bpf.label("eperm")
    bpf.ret(deny | errnos.EPERM)                            # refused: EPERM (what the kernel says to a non-owner)
    bpf.label("enosys")
    bpf.ret(deny | errnos.ENOSYS)                           # as if this kernel had no such syscall: ENOSYS
    return bpf.code()


def install_filter(unix_sockets: bool, landlock_abi: int) -> None:
    """seccomp, for good in this process and its children: `seccomp_program` on this machine.

    Classic BPF rather than a libseccomp binding: the one maintained binding for ctypes runs
    `ldconfig` at import (a quarter second on the worker's start path).
    """
    program = seccomp_program(_SECCOMP_ARCH[os.uname().machine], unix_sockets, landlock_abi)
    filters = (_SockFilter * len(program))(*[_SockFilter(*op) for op in program])
    prog = _SockFprog(len(program), filters)
    libc = _libc()
    libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)
    if libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.byref(prog), 0, 0) != 0:
        errno = ctypes.get_errno()
        raise OSError(errno, f"seccomp: {os.strerror(errno)}")


def _existing(paths: Iterable[str]) -> list[str]:
    seen, found = set(), []
    for path in paths:
        if not path:
            continue
        real = os.path.realpath(path)
        if real not in seen and os.path.exists(real):
            seen.add(real)
            found.append(real)
    return found


@functools.lru_cache(maxsize=1)
def readable_roots() -> list[str]:
    """What the learner's process may read: Python's install, its site-packages, torch, system libs.

    Never the current folder, the data dir, the vault or $HOME as such (a venv or a user
    site-packages inside $HOME is granted, the rest of $HOME is not), nor `hidden_folders()`: the
    app's own package and the kernels, even where pip put them in a readable site-packages. Called
    by the worker once the drills are loaded (the kernels' folder is known then).
    """
    import site

    roots = [sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix,
             "/usr", "/lib", "/lib64", "/lib32", "/bin", "/sbin", "/opt/conda", "/sys"]
    try:
        roots += site.getsitepackages()
    except AttributeError:
        pass
    roots.append(site.getusersitepackages() if site.ENABLE_USER_SITE else "")
    torch_file = getattr(sys.modules.get("torch"), "__file__", None)
    if torch_file:
        roots.append(os.path.dirname(os.path.dirname(torch_file)))
    roots += [os.path.join("/etc", name) for name in ETC_FILES]
    roots += DEVICES_READ
    return granted_around(_existing(roots), hidden_folders())


def hidden_folders() -> list[str]:
    """Folders learner code must not read wherever they lie: the kernels (every drill's reference
    and bank) as loaded, as bundled and as the tests' switch names them, and studyapp's own package,
    which a wheel ships them in. The child needs neither: all it runs was imported before Landlock."""
    import studyapp
    from studyapp.grader.worker import KERNELS_ENV
    from studyapp.kernels_loader import PACKAGE_NAME
    from studyapp.paths import kernels_dir

    loaded = list(getattr(sys.modules.get(PACKAGE_NAME), "__path__", []))
    return _existing([os.path.dirname(studyapp.__file__ or ""), str(kernels_dir()),
                      os.environ.get(KERNELS_ENV, ""), *loaded])


def _inside(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


def granted_around(roots: Iterable[str], hidden: Iterable[str]) -> list[str]:
    """`roots` (real paths) less every `hidden` folder and all below it.

    Landlock only adds rights, and a rule on a folder covers all that lies below it, so a root
    holding a hidden folder is granted entry by entry instead, recursing only into the folders on
    the way down to it; those folders themselves cannot be listed then (the import caches the
    worker filled already know what they hold). Symbolic links there are skipped: a rule follows
    them, and would grant wherever they point.
    """
    hidden = list(hidden)
    granted: list[str] = []
    seen: set[str] = set()

    def grant(path: str) -> None:
        if path in seen or any(_inside(path, folder) for folder in hidden):
            return
        seen.add(path)
        if not any(_inside(folder, path) for folder in hidden):
            granted.append(path)
            return
        try:
            with os.scandir(path) as entries:
                children = sorted(entry.path for entry in entries if not entry.is_symlink())
        except OSError:
            return
        for child in children:
            grant(child)

    for root in roots:
        grant(root)
    return granted


def _list_import_folders_now() -> None:
    """Before the walls go up: each `sys.path` folder whose listing the import system holds is
    listed again if it changed since (a `pip install` beside the app). A folder on the way to a
    hidden one (site-packages, holding the kernels) cannot be listed afterwards, and an import
    finder that found it changed then knew nothing in it: every package the worker had not
    imported was "not found", blamed on the learner. A finder that finds its folder unchanged
    only stats it."""
    import importlib.machinery

    try:
        importlib.machinery.PathFinder.find_spec("_studyapp_lists_its_import_folders")
    except (OSError, ImportError, ValueError):
        pass  # a folder gone meanwhile: its finder lists nothing, as before
    for finder in list(sys.path_importer_cache.values()):
        if isinstance(finder, importlib.machinery.FileFinder):
            _keep_listing_behind_the_walls(finder)


def _keep_listing_behind_the_walls(finder) -> None:
    """A folder changed after it was listed here (a `pip install` while learner code runs) is
    listed again by its finder at the next import, and behind the walls that listing is refused:
    the finder then knew nothing in it. It keeps what it listed before the walls instead."""
    fill = finder._fill_cache  # CPython's FileFinder: the method that lists the folder

    def refill() -> None:
        try:
            os.listdir(finder.path or os.getcwd())
        except PermissionError:
            return  # not listable now: the listing made before the walls stands
        except OSError:
            pass  # gone: as Python does
        fill()

    finder._fill_cache = refill


def _cuda_devices() -> list[str]:
    try:
        names = os.listdir("/dev")
    except OSError:
        return []
    return _existing(f"/dev/{n}" for n in names if n.startswith(CUDA_DEVICE_PREFIXES))


def restrict(confinement: Confinement, scratch: str, cuda: bool = False) -> None:
    """In L, just before learner code: Landlock on files, TCP, signals and abstract sockets, and
    the seccomp filter: no unix sockets and, with "files", what Landlock does not govern: no change
    of a file's mode, owner, times or attributes, and below ABI 3 no truncating, below ABI 5 no
    open with access mode 3 (`seccomp_program`; the probe claimed "files" only where that filter
    could be installed).

    Nothing of the kernels is readable: the drills were imported before (the worker loads them
    all), and a drill's folder holds its reference, its bank of right answers and its hints.
    """
    files_abi = max(confinement.landlock_abi, 1) if confinement.has(Protection.FILES) else 0
    if confinement.has(Protection.UNIX_SOCKETS) or files_abi:
        install_filter(unix_sockets=confinement.has(Protection.UNIX_SOCKETS), landlock_abi=files_abi)
    if not confinement.has(Protection.FILES):
        return
    from landlockpy import AccessFS, AccessNet, Ruleset, Scope

    _list_import_folders_now()
    read = AccessFS.READ_FILE | AccessFS.READ_DIR | AccessFS.EXECUTE
    write = (AccessFS.WRITE_FILE | AccessFS.TRUNCATE | AccessFS.MAKE_REG | AccessFS.MAKE_DIR
             | AccessFS.REMOVE_FILE | AccessFS.REMOVE_DIR | AccessFS.MAKE_SYM | AccessFS.MAKE_FIFO
             | AccessFS.MAKE_SOCK | AccessFS.REFER)
    scope = Scope.SIGNAL | Scope.ABSTRACT_UNIX_SOCKET if confinement.has(Protection.SCOPE) else Scope.NONE
    net = None if confinement.has(Protection.TCP) else AccessNet.NONE  # None: every right the kernel knows
    with Ruleset(scoped=scope, handled_net=net) as ruleset:  # handles every fs right this kernel knows
        def allow(path: str, access: AccessFS) -> None:
            if not os.path.isdir(path):  # directory-only rights on a file are an error (EINVAL)
                access &= AccessFS.EXECUTE | AccessFS.WRITE_FILE | AccessFS.READ_FILE | AccessFS.TRUNCATE | AccessFS.IOCTL_DEV
            ruleset.allow_path(path, access)

        for root in readable_roots():  # cached by the worker
            try:
                allow(root, read)
            except FileNotFoundError:  # removed since (pip, another process): nothing to read
                pass
        allow("/dev/null", AccessFS.WRITE_FILE)
        # its own entry as /proc names it: in a PID namespace getpid() is 1, the host's init
        allow(os.path.realpath("/proc/self"), AccessFS.READ_FILE | AccessFS.READ_DIR)
        allow(scratch, read | write)
        if cuda:
            for device in _cuda_devices():
                allow(device, read | AccessFS.WRITE_FILE | AccessFS.IOCTL_DEV)
            for path in _existing(["/proc/driver/nvidia"]):
                allow(path, AccessFS.READ_FILE | AccessFS.READ_DIR)
        # TCP bind and connect are handled (the default) and never granted: no TCP at all
        ruleset.restrict()
