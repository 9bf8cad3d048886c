"""Resource limits for a learner's child process, and how to apply them inside it.

~450 lines on purpose: the switch to `nobody` is tried for real (`probe_drop`), then done and
checked in the child, step for step the same; apart, the probe and the child would drift.
"""

from __future__ import annotations

import ctypes
import errno
import os
import resource
import signal
from dataclasses import dataclass
from typing import TYPE_CHECKING, NoReturn

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


class DropRefused(Exception):
    """One step of the switch to `nobody` failed; the message names the step and the error."""


SETUP_PREFIX = "studyapp grader setup: "
"""Starts the one line a child that refuses to run learner code writes to its output (`refuse_setup`)."""
CAPABILITY_SETS = ("CapInh", "CapPrm", "CapEff", "CapAmb")


def drop_to_nobody(workdir: str, keep: int) -> int:
    """A root worker's child becomes `nobody`: its scratch folder is handed over, then groups, gid
    and uid switch, capabilities kept over the switch (KEEPCAPS) only to be cut to `keep` right after.

    `keep` is CAP_DAC_READ_SEARCH while Landlock confines reads: the interpreter may live where
    nobody cannot read (a pyenv under /root), and the capability reads every file Landlock lets
    through. When this process may not keep it (a bounding set without it, Docker's default), it
    keeps none rather than every permitted capability. Returns what it kept; raises `DropRefused`.
    """
    step = "chown of its scratch folder to nobody"
    try:
        os.chown(workdir, UNPRIVILEGED_UID, UNPRIVILEGED_UID)
        step = "switching to nobody"
        prctl(PR_SET_KEEPCAPS, 1)
        os.setgroups([])
        os.setgid(UNPRIVILEGED_UID)
        os.setuid(UNPRIVILEGED_UID)
        prctl(PR_SET_KEEPCAPS, 0)
        step = "giving up its capabilities"
        return keep_capabilities(keep)
    except OSError as exc:
        detail = exc.strerror or str(exc)
        if exc.errno == errno.EINVAL and in_a_user_namespace():
            detail += f": uid {UNPRIVILEGED_UID} is not mapped in this user namespace"
        raise DropRefused(f"{step} failed: {detail}") from exc


def keep_capabilities(keep: int) -> int:
    """Exactly `keep` permitted and effective, or, when that is refused (not permitted), none."""
    try:
        set_capabilities(keep)
        return keep
    except OSError:
        if not keep:
            raise
    set_capabilities(0)
    return 0


def privileges_left(kept: int, uid: int | None) -> str | None:
    """What this process holds beyond capabilities `kept` (none inheritable or ambient) and, with
    `uid`, any user or group id or supplementary group but `uid`'s; None when nothing (from
    /proc/self/status: what the kernel says, not what the calls returned)."""
    try:
        with open("/proc/self/status") as status:
            fields = {name: value.split() for name, _, value in (line.partition(":") for line in status)}
    except OSError as exc:
        return f"its status cannot be read ({exc.strerror or exc})"
    problems = []
    if uid is not None:
        for name in ("Uid", "Gid"):
            ids = fields.get(name, [])
            if not ids or any(int(i) != uid for i in ids):
                problems.append(f"{name.lower()} {' '.join(ids) or 'unknown'}, not {uid}")
        if fields.get("Groups"):
            problems.append(f"groups {' '.join(fields['Groups'])}")
    extra = {}
    for name in CAPABILITY_SETS:
        try:
            value = int(fields[name][0], 16)
        except (KeyError, IndexError, ValueError):
            problems.append(f"{name} unknown")
            continue
        beyond = value & ~(kept if name in ("CapPrm", "CapEff") else 0)
        if beyond:
            extra[name] = beyond
    if extra:
        problems.append("capabilities left: " + ", ".join(f"{name} {v:#x}" for name, v in extra.items()))
    return "; ".join(problems) or None


def refuse_setup(message: str) -> NoReturn:
    """Stop the child before any learner code, saying why in one line (no traceback): the worker
    reports a setup failure, the grader's, not the learner's."""
    from studyapp.grader.contract import ChildExit

    try:
        os.write(2, f"{SETUP_PREFIX}{message}\n".encode("utf-8", "replace"))
    except OSError:
        pass
    os._exit(ChildExit.SETUP_FAILED)


def give_up_privileges(workdir: str, confinement: Confinement) -> tuple[int, int | None]:
    """All or nothing, as the worker's probe (`probe_drop`) found it and the verdict states it.

    Where the confinement lists "runs as nobody" (a root worker that can switch), the child
    switches or stops with a setup error: learner code never runs as root while the verdict says
    nobody. Elsewhere it stays the worker's user and gives up every capability (but
    CAP_DAC_READ_SEARCH for root under Landlock). Sets no_new_privs, so no setuid program gives
    anything back. Returns what `check_privileges` must find: capabilities kept, uid (or None).
    """
    from studyapp.grader.confine import Protection

    as_root = os.geteuid() == 0
    keep = 1 << CAP_DAC_READ_SEARCH if as_root and confinement.has(Protection.FILES) else 0
    if as_root and confinement.has(Protection.OTHER_USER):
        try:
            kept = drop_to_nobody(workdir, keep)
        except DropRefused as exc:
            refuse_setup(f"could not switch your code to nobody ({exc}), although it could when the grader started")
        uid: int | None = UNPRIVILEGED_UID
    else:
        try:
            kept = keep_capabilities(keep)
        except OSError as exc:
            refuse_setup(f"could not give up its capabilities ({exc.strerror or exc})")
        uid = None
    prctl(PR_SET_NO_NEW_PRIVS, 1)
    return kept, uid


def check_privileges(kept: int, uid: int | None) -> None:
    """The last step before learner code: anything more than `give_up_privileges` meant to leave
    is a setup error."""
    problem = privileges_left(kept, uid)
    if problem:
        refuse_setup(f"privileges were left after giving them up ({problem})")


def set_capabilities(mask: int) -> None:
    """capset(2): exactly `mask` (capabilities 0-31) permitted and effective, nothing inheritable."""
    header = (ctypes.c_uint32 * 2)(0x20080522, 0)  # _LINUX_CAPABILITY_VERSION_3, this process
    data = (ctypes.c_uint32 * 6)(mask, mask, 0, 0, 0, 0)  # {effective, permitted, inheritable} x 2
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.capset(header, data) != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"capset: {os.strerror(err)}")


def in_a_user_namespace() -> bool:
    """Whether this process's user namespace is not the initial one (which maps every uid)."""
    try:
        with open("/proc/self/uid_map") as uid_map:
            return uid_map.read().split() != ["0", "0", "4294967295"]
    except OSError:
        return False


@dataclass(frozen=True)
class DropProbe:
    """What a root worker's switch to `nobody` does on this machine, tried for real (`probe_drop`)."""

    switches: bool
    """Learner code runs as nobody ("runs as nobody" is active)."""
    reason: str = ""
    """Why it does not, when it does not."""
    capabilities: int = 0
    """What nobody keeps: CAP_DAC_READ_SEARCH (under Landlock, where allowed) or nothing."""
    unreadable: str = ""
    """A path of this Python that nobody cannot read with those capabilities; '' when none."""


def interpreter_paths() -> list[str]:
    """What nobody must read to import what the grader has not loaded: the standard library, its
    extension modules, site-packages and torch (found, never imported)."""
    import importlib.util
    import sysconfig

    paths = sysconfig.get_paths()
    found = [paths["stdlib"], os.__file__, os.path.join(paths["platstdlib"], "lib-dynload"),
             paths["purelib"], paths["platlib"]]
    try:
        spec = importlib.util.find_spec("torch")
    except (ImportError, ValueError):
        spec = None
    if spec is not None and spec.origin:
        found.append(os.path.dirname(spec.origin))
    seen: list[str] = []
    for path in found:
        if path and path not in seen and os.path.exists(path):
            seen.append(path)
    return seen


def first_unreadable(paths: list[str]) -> str:
    """The first of `paths` this process cannot list (a folder) or read (a file); '' when none."""
    for path in paths:
        try:
            if os.path.isdir(path):
                os.listdir(path)
            else:
                with open(path, "rb") as file:
                    file.read(1)
        except OSError:
            return path
    return ""


def nobody_can_read(path: str) -> bool:
    """Whether nobody, holding no capability, can read the file `path` (tried in a forked child;
    a root worker only)."""
    pid = os.fork()
    if pid == 0:
        try:
            os.setgroups([])
            os.setgid(UNPRIVILEGED_UID)
            os.setuid(UNPRIVILEGED_UID)
            with open(path, "rb") as file:
                file.read(1)
            os._exit(0)
        except BaseException:  # noqa: BLE001 - the answer is the exit status
            os._exit(1)
    _, status = os.waitpid(pid, 0)
    return status == 0


def _try_the_drop(confinement: Confinement, folder: str, paths: list[str]) -> dict:
    """In a throw-away child: the child's own steps (its namespaces and scratch tmpfs, the switch,
    the check), then what nobody cannot read."""
    from studyapp.grader.confine import Protection, enter_namespaces

    enter_namespaces(confinement, folder, 1 << 20, 16)  # with the quota, the tmpfs is what gets chowned
    keep = 1 << CAP_DAC_READ_SEARCH if confinement.has(Protection.FILES) else 0
    kept = drop_to_nobody(folder, keep)
    problem = privileges_left(kept, UNPRIVILEGED_UID)
    if problem:
        raise DropRefused(f"privileges were left after the switch: {problem}")
    return {"kept": kept, "refused": keep & ~kept, "unreadable": "" if kept else first_unreadable(paths)}


def _run_probe(confinement: Confinement) -> dict:
    import json
    import shutil
    import tempfile

    paths = interpreter_paths()
    folder = tempfile.mkdtemp(prefix="studyapp-probe-")
    try:
        read_fd, write_fd = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(read_fd)
            try:
                found = _try_the_drop(confinement, folder, paths)
            except BaseException as exc:  # noqa: BLE001 - the reason goes back to the parent
                found = {"error": str(exc) if isinstance(exc, DropRefused) else f"{type(exc).__name__}: {exc}"}
            try:
                os.write(write_fd, json.dumps(found).encode()[:4000])
            finally:
                os._exit(0)
        os.close(write_fd)
        with os.fdopen(read_fd, "rb") as reader:
            text = reader.read().decode("utf-8", "replace")
        os.waitpid(pid, 0)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    try:
        found = json.loads(text)
    except ValueError:
        return {"error": "the probe's child died"}
    return found if isinstance(found, dict) else {"error": "the probe's child died"}


def probe_drop(confinement: Confinement) -> tuple[Confinement, DropProbe | None]:
    """`confinement` (from `confine.probe`) with "runs as nobody" decided by trying, in a
    throw-away child, exactly what each grade's child does: its namespaces, chown of a scratch
    folder, setuid, capset, and the check that nothing is left. The worker grades with the result
    and `doctor` prints it, so both say the same as every verdict, before any grade.

    When the switch works but nobody keeps no capability and cannot read this Python (a pyenv
    under /root, with CAP_DAC_READ_SEARCH refused or Landlock off), the two cases differ:

    - Landlock on (the capability refused, e.g. Docker's default bounding set): nobody could not
      even set Landlock up, since its rules are opened by path. Learner code stays root without
      capabilities, walled in by Landlock to what it may read and write; the line says so.
    - Landlock off: root would read and rewrite the app's data, the vault, ~/.ssh; nobody cannot.
      So it still switches ("runs as nobody" stays true), and an import that fails because nobody
      cannot read the module is reported as the grader's setup error naming cause and fix
      (`unreadable_python_advice`), never as the learner's import error; `doctor` warns before.
      CUDA grading, whose fresh interpreter imports torch as nobody, is refused with that advice.

    Returns the confinement unchanged, and None, for a worker that is not root.
    """
    from dataclasses import replace

    from studyapp.grader.confine import Protection

    if os.geteuid() != 0:
        return confinement, None
    try:
        found = _run_probe(confinement)
    except OSError as exc:
        found = {"error": f"could not be tried ({exc.strerror or exc})"}
    who = ("root of a user namespace (your own user outside it)" if in_a_user_namespace() else "root")
    landlock = confinement.has(Protection.FILES)
    if "error" in found:
        caps = "with no capability beyond CAP_DAC_READ_SEARCH, under Landlock" if landlock else "without capabilities"
        drop = DropProbe(False, f"cannot switch to nobody ({found['error']}): learner code runs as {who}, {caps}")
    elif found["unreadable"] and landlock:
        why = ("which this process may not keep (not in its capability bounding set)" if found["refused"]
               else "which it does not keep")
        drop = DropProbe(False, f"nobody cannot read {found['unreadable']} without CAP_DAC_READ_SEARCH, {why}: "
                                f"learner code runs as {who} without capabilities, under Landlock",
                         unreadable=found["unreadable"])
    else:
        drop = DropProbe(True, capabilities=int(found["kept"]), unreadable=found["unreadable"])
    active: list[Protection] = [p for p in confinement.active if p != Protection.OTHER_USER]
    missing: dict[Protection, str] = {p: why for p, why in confinement.missing.items()
                                      if p != Protection.OTHER_USER}
    if drop.switches:
        at = active.index(Protection.NO_PROC_FDS) if Protection.NO_PROC_FDS in active else len(active)
        active.insert(at, Protection.OTHER_USER)
    else:
        missing[Protection.OTHER_USER] = drop.reason
    return replace(confinement, active=tuple(active), missing=missing), drop


def unreadable_python_advice(drop: DropProbe) -> str:
    """What to do about a Python that nobody cannot read, for a verdict and `doctor`."""
    return (f"nobody cannot read {drop.unreadable}: this Python lies where only root may read it (a pyenv "
            "under /root?). Fix: install Python where every user can read it (/usr/local, /opt), or make "
            "the folders on its way readable to all (chmod o+rx), or run studyapp as an ordinary user; "
            "where Landlock is on, the grader keeps the right to read it")


def apply_child_limits(limits: Limits, workdir: str, confinement: Confinement, limit_memory: bool = True) -> None:
    """Run in the child before any learner code: own session, namespaces, lower privileges, hard
    limits; returns in the learner's process (the first of its PID namespace, when there is one).

    Order matters: root makes the namespaces before giving up root; an ordinary user counts its
    tasks for RLIMIT_NPROC before a new user namespace hides its uid. Privileges are given up all
    or nothing (`give_up_privileges`): a step that fails, or anything left after, stops the child
    with a setup error before learner code runs.
    """
    from studyapp.grader.confine import enter_namespaces, fork_learner

    os.setsid()
    as_root = os.geteuid() == 0
    if as_root:
        enter_namespaces(confinement, workdir, limits.scratch_bytes, limits.scratch_files)
    kept, uid = give_up_privileges(workdir, confinement)
    die_with_parent()  # after setuid, which clears it
    _set_rlimits(limits, limit_memory)
    if not as_root:
        enter_namespaces(confinement, workdir, limits.scratch_bytes, limits.scratch_files)
    check_privileges(kept, uid)  # after the user namespace too: it grants every capability in it
    fork_learner(confinement)
    die_with_parent()  # L: when C goes, L goes, and with it the whole PID namespace
    os.chdir(workdir)
    from studyapp.grader.environment import learner_environment

    kept_environment = learner_environment(os.environ, workdir)
    os.environ.clear()
    os.environ.update(kept_environment)
    import tempfile

    tempfile.tempdir = None  # read TMPDIR again: the worker's own, cached at the fork, is closed to the child
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
