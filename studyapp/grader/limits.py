"""Resource limits for a learner's child process, and how to apply them inside it."""

from __future__ import annotations

import ctypes
import os
import resource
import signal
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from studyapp.grader.confine import Confinement
    from studyapp.grader.contract import GradeLimits

PR_SET_PDEATHSIG = 1
PR_SET_KEEPCAPS = 8
PR_SET_CHILD_SUBREAPER = 36
PR_SET_NO_NEW_PRIVS = 38
CAP_DAC_READ_SEARCH = 2
UNPRIVILEGED_UID = 65534  # "nobody": root ignores RLIMIT_NPROC, so a root worker drops to it
SCRATCH_BYTES = 64 << 20
"""What a scratch folder may hold: room for a debug dump or two, not for filling the disk."""


@dataclass(frozen=True)
class Limits:
    """What one child may use: the job's `GradeLimits` (from `Settings`) plus the grader's own caps."""

    timeout: float
    """Wall-clock seconds the learner's code may run (measured by the parent)."""
    memory_budget: int
    """Bytes of address space on top of what the forked worker already maps (torch alone maps GBs)."""
    output_cap: int = 1 << 20
    """Bytes of stdout+stderr kept, and of any one file it writes: more fails with EFBIG (RLIMIT_FSIZE)."""
    extra_processes: int = 16
    """Processes/threads the child may add to its user's count: enough for a helper, not a bomb."""
    scratch_bytes: int = SCRATCH_BYTES
    """Bytes its scratch folder may hold (RLIMIT_FSIZE caps one file, not how many it writes)."""
    scratch_files: int = 4096
    """Files and folders its scratch folder may hold: a million empty files fill a disk's inodes."""

    @classmethod
    def for_job(cls, limits: GradeLimits) -> Limits:
        return cls(timeout=limits.timeout, memory_budget=limits.memory_mb << 20)


def prctl(option: int, value: int) -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(option, value, 0, 0, 0)


def become_subreaper() -> None:
    """Orphans of a learner's processes are reparented to us, so we can find and kill them all."""
    prctl(PR_SET_CHILD_SUBREAPER, 1)


def die_with_parent() -> None:
    """SIGKILL this process when its parent dies (a crashed worker leaves no child running)."""
    prctl(PR_SET_PDEATHSIG, signal.SIGKILL)


def address_space_size() -> int:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmSize:"):
                return int(line.split()[1]) * 1024
    return 0


def tasks_of_user(uid: int) -> int:
    """How many tasks (threads count) `uid` runs now: RLIMIT_NPROC is compared with this number."""
    total = 0
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/status") as status:
                fields = dict(line.split(":", 1) for line in status if ":" in line)
            if int(fields["Uid"].split()[0]) == uid:
                total += int(fields["Threads"])
        except (OSError, KeyError, ValueError):
            continue
    return total


def drop_privileges(workdir: str, keep_read_search: bool = True) -> None:
    """A root worker runs learner code as `nobody`: RLIMIT_NPROC then holds and the app's files are safe.

    With `keep_read_search` it keeps CAP_DAC_READ_SEARCH, because the interpreter itself may live
    where `nobody` cannot read (a pyenv under /root); only safe when Landlock confines what it
    reads, since the capability reads every file. It sets no_new_privs so no setuid program gives
    root back.
    """
    if os.geteuid() != 0:
        prctl(PR_SET_NO_NEW_PRIVS, 1)
        return
    os.chown(workdir, UNPRIVILEGED_UID, UNPRIVILEGED_UID)
    prctl(PR_SET_KEEPCAPS, 1)
    os.setgroups([])
    os.setgid(UNPRIVILEGED_UID)
    os.setuid(UNPRIVILEGED_UID)
    set_capabilities(1 << CAP_DAC_READ_SEARCH if keep_read_search else 0)
    prctl(PR_SET_NO_NEW_PRIVS, 1)


def set_capabilities(mask: int) -> None:
    """capset(2): exactly `mask` (capabilities 0-31) permitted and effective, nothing inheritable."""
    header = (ctypes.c_uint32 * 2)(0x20080522, 0)  # _LINUX_CAPABILITY_VERSION_3, this process
    data = (ctypes.c_uint32 * 6)(mask, mask, 0, 0, 0, 0)  # {effective, permitted, inheritable} x 2
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.capset(header, data) != 0:
        raise OSError(ctypes.get_errno(), "capset failed")


def apply_child_limits(limits: Limits, workdir: str, confinement: Confinement, limit_memory: bool = True) -> None:
    """Run in the child before any learner code: own session, namespaces, lower privileges, hard
    limits; returns in the learner's process (the first of its PID namespace, when there is one).

    Order matters: root makes the namespaces before giving up root; an ordinary user counts its
    tasks for RLIMIT_NPROC before a new user namespace hides its uid.
    """
    from studyapp.grader.confine import Protection, enter_namespaces, fork_learner

    os.setsid()
    as_root = os.geteuid() == 0
    if as_root:
        enter_namespaces(confinement, workdir, limits.scratch_bytes, limits.scratch_files)
    try:
        drop_privileges(workdir, keep_read_search=confinement.has(Protection.FILES))
    except PermissionError:
        pass  # a container without CAP_SETUID: stay as we are; the wall clock and tree kill still hold
    die_with_parent()  # after setuid, which clears it
    _set_rlimits(limits, limit_memory)
    if not as_root:
        enter_namespaces(confinement, workdir, limits.scratch_bytes, limits.scratch_files)
    fork_learner(confinement)
    die_with_parent()  # L: when C goes, L goes, and with it the whole PID namespace
    os.chdir(workdir)
    from studyapp.grader.environment import learner_environment

    kept = learner_environment(os.environ, workdir)
    os.environ.clear()
    os.environ.update(kept)
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # over the output cap: EFBIG, not a silent death


def _set_rlimits(limits: Limits, limit_memory: bool) -> None:
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    resource.setrlimit(resource.RLIMIT_FSIZE, (limits.output_cap, limits.output_cap))
    cpu = int(limits.timeout) + 2  # a backstop: the parent's wall clock normally acts first
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
    nproc = tasks_of_user(os.getuid()) + limits.extra_processes
    resource.setrlimit(resource.RLIMIT_NPROC, (nproc, nproc))
    if limit_memory:
        ceiling = address_space_size() + limits.memory_budget
        resource.setrlimit(resource.RLIMIT_AS, (ceiling, ceiling))
